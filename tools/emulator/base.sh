# Sourced by run.sh: the Debian part of the system disk (a minimal bookworm root with systemd,
# Debian's 6.12 kernel and the libraries the binaries link), built once with mmdebstrap and kept
# in the cache under a name that hashes everything that goes into it.

# The newest Debian 6.12 kernel the configured mirror offers (bookworm-security carries the
# 6.12 backport): CONFIG_UNICODE for the casefolded /data, CONFIG_FUSE_PASSTHROUGH, virtio.
emulator_kernel_package() {
  apt-cache search --names-only '^linux-image-6\.12\.[0-9]+\+deb12-amd64-unsigned$' |
    awk '{print $1}' | sort -V | tail -1
}

# The Debian packages that hold the shared libraries of the given binaries (ldd, then dpkg -S),
# so that the guest has exactly what the binaries link.
emulator_library_packages() {
  local lib
  for lib in $(ldd "$@" | awk '/=>/ {print $3}' | sort -u); do
    dpkg -S "$(readlink -f "$lib")" 2>/dev/null || dpkg -S "$lib"
  done | cut -d: -f1 | sort -u
}

# emulator_build_base CACHE_DIR KERNEL_PACKAGE LIBRARY_PACKAGE...: prints the path of the base
# root directory, building it if the cache has none for these inputs. Its kernel and initrd are
# copied beside it (base-<hash>.vmlinuz, base-<hash>.initrd) for QEMU's direct kernel boot.
emulator_build_base() {
  local cache=$1 kernel=$2
  shift 2
  local mirrors=(
    "deb http://deb.debian.org/debian bookworm main"
    "deb http://deb.debian.org/debian bookworm-updates main"
    "deb http://deb.debian.org/debian-security bookworm-security main"
  )
  # systemd as PID 1, udev for /dev/disk and the virtio ports, kmod and initramfs-tools for the
  # kernel's modules and initrd; e2fsprogs for fsck at boot (Android's fs_mgr checks userdata);
  # fuse3 for /dev/fuse's udev rule; util-linux's setpriv runs commands as the apps' uids.
  local include=(systemd-sysv udev kmod initramfs-tools e2fsprogs fuse3 util-linux "$kernel" "$@")
  local key
  key=$(printf '%s\n' "base-v1" "${mirrors[@]}" "${include[@]}" | sha256sum | cut -c1-16)
  local root=$cache/base-$key
  if [[ -d "$root" && -f "$root.vmlinuz" && -f "$root.initrd" ]]; then
    echo "$root"
    return
  fi
  rm -rf "$root.part"
  mkdir -p "$cache"
  local started=$SECONDS
  echo "emulator: building the base system (mmdebstrap bookworm: ${include[*]}); a few minutes, once" >&2
  # The initrd must find the disk: virtio drivers into it whatever the build host has.
  mmdebstrap --variant=minbase --include="$(IFS=,; echo "${include[*]}")" \
    --customize-hook='echo "virtio_blk" >>"$1/etc/initramfs-tools/modules"' \
    --customize-hook='echo "virtio_pci" >>"$1/etc/initramfs-tools/modules"' \
    --customize-hook='chroot "$1" update-initramfs -u -k all' \
    --format=directory bookworm "$root.part" "${mirrors[@]}" >"$root.log" 2>&1 ||
    { tail -30 "$root.log" >&2; echo "emulator: mmdebstrap failed; its log: $root.log" >&2; return 1; }
  emulator_finish_base "$root"
  echo "emulator: base system built in $((SECONDS - started)) s: $root" >&2
  echo "$root"
}

# Copies the kernel and initrd out of a finished mmdebstrap directory ROOT.part and renames it ROOT.
emulator_finish_base() {
  local root=$1 vmlinuz initrd
  vmlinuz=$(ls "$root.part"/boot/vmlinuz-* 2>/dev/null | head -1)
  initrd=$(ls "$root.part"/boot/initrd.img-* 2>/dev/null | head -1)
  [[ -n "$vmlinuz" && -n "$initrd" ]] || { echo "emulator: no kernel or initrd in $root.part/boot" >&2; return 1; }
  cp "$vmlinuz" "$root.vmlinuz"
  cp "$initrd" "$root.initrd"
  rm -rf "$root"
  mv "$root.part" "$root"
}
