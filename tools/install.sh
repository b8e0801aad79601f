#!/usr/bin/env bash
# Installs scopedfs for users: optimised, commit-stamped binaries (bazel --config=release), the
# mount helper, the systemd unit, the shipped configs (an existing /etc/scopedfs file is never
# overwritten), the man pages and the documentation (README.md and docs/); or removes what an
# install put there.
#   tools/install.sh [--prefix=/usr/local] [--sysconfdir=/etc] [--destdir=DIR] [--bin_dir=DIR]
#   tools/install.sh --uninstall [--purge] [--prefix=...] [--sysconfdir=...] [--destdir=DIR]
# --bin_dir takes prebuilt scopedfsd and scopedfsctl (DIR/daemon/scopedfsd, DIR/tools/scopedfsctl)
# instead of building. --destdir stages everything under DIR (for packaging and tests). Every
# installed file is listed in PREFIX/share/scopedfs/installed, which --uninstall reads; --purge
# also removes the configs.
set -euo pipefail
repo=$(cd "$(dirname "$0")/.." && pwd)
prefix=/usr/local sysconfdir=/etc destdir="" bin_dir="" uninstall=false purge=false
usage() { echo "usage: $0 [--prefix=DIR] [--sysconfdir=DIR] [--destdir=DIR] [--bin_dir=DIR] [--uninstall [--purge]]" >&2; exit 64; }
for arg in "$@"; do
  case "$arg" in
    --prefix=*) prefix=${arg#*=} ;;
    --sysconfdir=*) sysconfdir=${arg#*=} ;;
    --destdir=*) destdir=${arg#*=} ;;
    --bin_dir=*) bin_dir=${arg#*=} ;;
    --uninstall) uninstall=true ;;
    --purge) purge=true ;;
    -h | --help) sed -n '2,11p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) echo "install: unknown argument \"$arg\"" >&2; usage ;;
  esac
done
case "$prefix$sysconfdir" in *[[:space:]]*) echo "install: paths with spaces are not supported" >&2; exit 64 ;; esac
manifest_rel=$prefix/share/scopedfs/installed
manifest=$destdir$manifest_rel

is_config() { case "$1" in "$sysconfdir"/scopedfs/*) return 0 ;; esac; return 1; }
if $uninstall; then
  [[ -f "$manifest" ]] || { echo "install: nothing to uninstall ($manifest not found)" >&2; exit 1; }
  mapfile -t listed <"$manifest"
  # An uninstall without --purge leaves a manifest of the configs it kept, so that a later
  # --uninstall --purge still finds them.
  if ! $purge; then
    only_configs=true
    for f in "${listed[@]}"; do is_config "$f" || [[ "$f" == "$manifest_rel" ]] || only_configs=false; done
    if $only_configs; then
      echo "install: nothing to uninstall but the configs kept in $sysconfdir/scopedfs (--uninstall --purge removes them)" >&2
      exit 1
    fi
  fi
  removed=0 kept_configs=()
  for f in "${listed[@]}"; do
    [[ "$f" == "$manifest_rel" ]] && continue
    if is_config "$f" && ! $purge; then
      [[ -e "$destdir$f" ]] && kept_configs+=("$f")
      continue
    fi
    if [[ -e "$destdir$f" || -L "$destdir$f" ]]; then rm -f "$destdir$f"; removed=$((removed + 1)); fi
  done
  rm -f "$manifest"
  if ((${#kept_configs[@]} > 0)); then
    printf '%s\n' "${kept_configs[@]}" "$manifest_rel" >"$manifest"
  else
    rmdir "$destdir$prefix/share/scopedfs" 2>/dev/null || true
  fi
  rmdir "$destdir$prefix/share/doc/scopedfs/docs" "$destdir$prefix/share/doc/scopedfs" 2>/dev/null || true
  $purge && rmdir "$destdir$sysconfdir/scopedfs" 2>/dev/null || true
  echo "install: removed $removed files$($purge || echo "; kept the configs in $sysconfdir/scopedfs (--uninstall --purge removes them)")"
  if [[ -z "$destdir" ]] && command -v systemctl >/dev/null && [[ -d /run/systemd/system ]]; then
    systemctl daemon-reload || true
  fi
  exit 0
fi

if [[ -z "$bin_dir" ]]; then
  (cd "$repo" && bazel build --config=release //daemon:scopedfsd //tools:scopedfsctl)
  bin_dir=$(cd "$repo" && bazel info --config=release bazel-bin 2>/dev/null)
fi
for b in daemon/scopedfsd tools/scopedfsctl; do
  [[ -x "$bin_dir/$b" ]] || { echo "install: $bin_dir/$b is missing (build it, or drop --bin_dir)" >&2; exit 1; }
done

installed=()
put() {  # put MODE SOURCE DEST (DEST relative to the target root)
  install -D -m "$1" "$2" "$destdir$3"
  installed+=("$3")
}
put 0755 "$bin_dir/daemon/scopedfsd" "$prefix/sbin/scopedfsd"
put 0755 "$bin_dir/tools/scopedfsctl" "$prefix/bin/scopedfsctl"
put 0755 "$repo/tools/service/scopedfs" "$prefix/sbin/scopedfs"
for page in scopedfsd.8 mount.scopedfs.8 scopedfsctl.1 scopedfs.policy.5; do
  put 0644 "$repo/tools/man/$page" "$prefix/share/man/man${page##*.}/$page"
done
put 0644 "$repo/README.md" "$prefix/share/doc/scopedfs/README.md"
for doc in "$repo"/docs/*.md; do  # the pages README.md links to, at the same relative place
  put 0644 "$doc" "$prefix/share/doc/scopedfs/docs/${doc##*/}"
done
# The unit names the binaries and configs where this install puts them.
unit=$(mktemp)
trap 'rm -f "$unit"' EXIT
sed -e "s|/usr/local/sbin/|$prefix/sbin/|g" -e "s|/etc/scopedfs/|$sysconfdir/scopedfs/|g" \
  -e "s|/etc/default/scopedfsd|$sysconfdir/default/scopedfsd|g" \
  "$repo/tools/service/scopedfsd@.service" >"$unit"
put 0644 "$unit" "$sysconfdir/systemd/system/scopedfsd@.service"
# A config an earlier install put there and this one keeps stays in the manifest, so that
# --uninstall --purge removes it; one the administrator made stays out of it.
previous=()
[[ -f "$manifest" ]] && mapfile -t previous <"$manifest"
kept=()
for config in android.textproto android-strict.textproto permissive.textproto apps.textproto; do
  target=$sysconfdir/scopedfs/$config
  if [[ -e "$destdir$target" ]]; then
    kept+=("$target")
    for p in ${previous[@]+"${previous[@]}"}; do [[ "$p" == "$target" ]] && installed+=("$target"); done
  else
    put 0644 "$repo/policy/configs/$config" "$target"
  fi
done
mkdir -p "$(dirname "$manifest")"
printf '%s\n' "${installed[@]}" "$manifest_rel" >"$manifest"
echo "install: ${#installed[@]} files under ${destdir:-/} ($prefix, $sysconfdir)"
for k in ${kept[@]+"${kept[@]}"}; do echo "install: kept $k (it exists; the shipped one is not installed over it)"; done
"$destdir$prefix/sbin/scopedfsd" --version
if [[ -z "$destdir" ]]; then
  command -v mandb >/dev/null && mandb -q 2>/dev/null || true
  if command -v systemctl >/dev/null && [[ -d /run/systemd/system ]]; then
    systemctl daemon-reload || true
    echo "install: start with: systemctl enable --now scopedfsd@0   (man scopedfsd)"
  else
    echo "install: no systemd runs here; start with: mount -t fuse.scopedfs /data/media/0 /storage/emulated/0 -o policy=$sysconfdir/scopedfs/android.textproto,apps=$sysconfdir/scopedfs/apps.textproto   (man mount.scopedfs), or an /etc/fstab line (man mount.scopedfs); nothing restarts a daemon that dies: scopedfsctl repair mounts its fstab line again"
  fi
fi
