#!/usr/bin/env bash
# Compiles scopedfsd.te into AOSP's own platform policy with checkpolicy, so that every neverallow
# rule of that release is checked against the module, twice: against the policy as AOSP ships it,
# and with the one platform change the module needs (scopedfsd in private/domain.te's
# dac_override_allowed list; see docs/android.md). Needs a checkout of system/sepolicy, which the
# build does not have: run by hand, e.g. with the `fetch` of a public mirror.
#   tools/service/sepolicy/aosp_check.sh SEPOLICY_DIR
# BOARD_API_LEVEL (default 202404) is the vendor API level releases from Android 15 test.
# Prints each neverallow failure checkpolicy reports; exits 0 only if the module with the platform
# change compiles and without it fails on nothing but that change's two rules.
set -uo pipefail
[[ $# -eq 1 && -d "$1/public" && -d "$1/private" ]] || {
  echo "usage: $0 SEPOLICY_DIR (a system/sepolicy checkout: public/, private/, flagging/)" >&2
  exit 64
}
src=$1
here=$(cd "$(dirname "$0")" && pwd)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# build TREE: the platform policy (public + private, as plat_sepolicy.cil is made) and the module,
# in the order AOSP's build gives checkpolicy (build/soong/policy.go), for a user build.
build() {
  local tree=$1 files=() name d f flags=()
  for name in security_classes initial_sids access_vectors global_macros neverallow_macros \
    mls_macros mls_decl mls policy_capabilities te_macros ioctl_defines ioctl_macros; do
    for d in flagging public private; do [[ -f $tree/$d/$name ]] && files+=("$tree/$d/$name"); done
  done
  for d in public private; do
    [[ -f $tree/$d/attributes ]] && files+=("$tree/$d/attributes")
    for f in "$tree"/$d/*.te; do files+=("$f"); done
  done
  files+=("$here/scopedfsd.te")
  for name in roles_decl roles users initial_sid_contexts fs_use genfs_contexts port_contexts; do
    for d in public private; do [[ -f $tree/$d/$name ]] && files+=("$tree/$d/$name"); done
  done
  # Release flags the policy tests (is_flag_enabled): all off, as on a release without them.
  for f in $(grep -rhoE 'is_flag_(en|dis)abled\(RELEASE_[A-Z0-9_]+' "$tree/public" "$tree/private" |
    sed 's/.*(//' | sort -u); do flags+=(-D "target_flag_$f=false"); done
  m4 --fatal-warnings -D mls_num_sens=1 -D mls_num_cats=1024 -D target_arch=x86_64 \
    -D target_with_asan=false -D target_with_dexpreopt=false -D target_with_native_coverage=false \
    -D target_build_variant=user -D target_full_treble=true -D target_compatible_property=true \
    -D target_treble_sysprop_neverallow=true -D target_enforce_sysprop_owner=true \
    -D target_exclude_build_test=false -D target_requires_insecure_execmem_for_swiftshader=false \
    -D target_enforce_debugfs_restriction=true -D target_recovery=false \
    -D target_board_api_level="${BOARD_API_LEVEL:-202404}" ${flags[@]+"${flags[@]}"} \
    -s "${files[@]}" >"$tree.conf" || return 2
  checkpolicy -M -c 30 -o "$tree.bin" "$tree.conf"
}

cp -r "$src" "$tmp/as_shipped"
cp -r "$src" "$tmp/changed"
# The platform change: scopedfsd joins sdcardd, the FUSE daemon before MediaProvider's, in the list.
sed -i '/^define(`dac_override_allowed'"'"', `{$/,/^}'"'"')$/ s/^  sdcardd$/  scopedfsd\n  sdcardd/' \
  "$tmp/changed/private/domain.te"
grep -q '^  scopedfsd$' "$tmp/changed/private/domain.te" || {
  echo "aosp_check: no dac_override_allowed list with sdcardd in $src/private/domain.te" >&2
  exit 1
}

echo "== AOSP's policy as shipped + scopedfsd.te"
shipped=$(build "$tmp/as_shipped" 2>&1)
shipped_rc=$?
echo "$shipped" | grep -E 'neverallow' || { ((shipped_rc == 0)) && echo "(compiles)" || echo "$shipped" | tail -5; }
echo "== with scopedfsd in dac_override_allowed + scopedfsd.te"
changed=$(build "$tmp/changed" 2>&1)
rc=$?
echo "$changed" | grep -E 'neverallow' || { ((rc == 0)) && echo "(compiles)" || echo "$changed" | tail -5; }
others=$(echo "$shipped" | grep 'report_failure' | grep -vE 'capability \{ dac_(override|read_search) \}')
if ((rc == 0)) && [[ -z "$others" ]] && { ((shipped_rc == 0)) || grep -q report_failure <<<"$shipped"; }; then
  echo "aosp_check: OK: only the platform change's two rules refuse the module"
  exit 0
fi
echo "aosp_check: FAILED"
exit 1
