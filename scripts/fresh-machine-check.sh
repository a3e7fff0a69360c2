#!/usr/bin/env bash
# The README's quick start on a pristine Debian 12: the only proof that a new user's machine builds and runs
# ridgeline. A machine that has run ridgeline before keeps what earlier runs installed, so a green build there
# proves nothing about a fresh one.
#
#   scripts/fresh-machine-check.sh [--with-tests] [--keep]
#
# 1. mmdebstrap builds a minimal Debian 12 root (variant minbase, plus ca-certificates only) from Debian's
#    packages into a temporary folder: every other package must come from ridgeline's own scripts.
# 2. A clean clone of this repository's HEAD (committed files only) is copied into it.
# 3. Inside it (chroot; /proc, /sys, /dev and /dev/pts mounted, and always unmounted afterwards, even on
#    failure or Ctrl-C) runs, as a new user would:
#      scripts/quickstart.sh summary --model resnet18
#      build/release/ridgeline profile --layer "conv2d:..." --input 1x16x32x32 --quick --device cpu
#    and with --with-tests also scripts/test.sh (about an hour on 2 cores: run it by hand whenever the
#    dependencies change). There is no CUDA toolkit inside: this is the laptop path.
#
# The downloaded .debs are cached between runs in $RIDGELINE_FRESH_CACHE (default
# /var/cache/ridgeline/fresh-machine-debs), bind-mounted as apt's cache inside the root; the root itself is
# never kept (--keep leaves it for inspection and prints its path). Needs root (chroot, mounts) and
# mmdebstrap (scripts/setup.sh --test installs it). $RIDGELINE_DEBIAN_MIRROR overrides the mirror
# (default http://deb.debian.org/debian).
set -euo pipefail
repo=$(cd "$(dirname "$0")/.." && pwd)
with_tests=0
keep=0
for arg in "$@"; do
  case "$arg" in
    --with-tests) with_tests=1 ;;
    --keep) keep=1 ;;
    -h|--help) sed -n '2,24p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) echo "fresh-machine-check: unknown argument '$arg' (expected --with-tests or --keep)" >&2; exit 2 ;;
  esac
done

say() { echo "fresh-machine-check: [$((SECONDS / 60)) min $((SECONDS % 60)) s] $*"; }
die() { echo "fresh-machine-check: error: $*" >&2; exit 1; }

[[ $(id -u) -eq 0 ]] || die "needs root (mmdebstrap in root mode, chroot and mounts); run it with sudo"
command -v mmdebstrap >/dev/null || die "mmdebstrap is missing: apt-get install mmdebstrap (scripts/setup.sh --test installs it)"
git -C "$repo" rev-parse --verify -q HEAD >/dev/null || die "$repo is not a git checkout with a commit"
if [[ -n $(git -C "$repo" status --porcelain --untracked-files=no) ]]; then
  echo "fresh-machine-check: note: uncommitted changes are not checked (the root gets a clean clone of HEAD)"
fi

mirror=${RIDGELINE_DEBIAN_MIRROR:-http://deb.debian.org/debian}
security=${mirror%/debian}/debian-security
cache=${RIDGELINE_FRESH_CACHE:-/var/cache/ridgeline/fresh-machine-debs}
[[ $cache != *[[:space:]]* ]] || die "the cache path may not contain spaces: '$cache'"
mkdir -p "$cache"
root=$(mktemp -d /var/tmp/ridgeline-fresh-root.XXXXXX)
mounted=()

cleanup() {
  local rc=$?
  trap - EXIT INT TERM
  local i
  for ((i = ${#mounted[@]} - 1; i >= 0; i--)); do
    umount "${mounted[i]}" 2>/dev/null || umount -l "${mounted[i]}" 2>/dev/null ||
      echo "fresh-machine-check: could not unmount ${mounted[i]}" >&2
  done
  if findmnt -rn -o TARGET | grep -qF "$root/"; then
    echo "fresh-machine-check: something is still mounted under $root; it is left in place" >&2
  elif [[ $keep == 1 ]]; then
    echo "fresh-machine-check: the root is kept in $root (rm -rf --one-file-system it when done)"
  else
    rm -rf --one-file-system "$root"
  fi
  exit "$rc"
}
trap cleanup EXIT
trap 'echo "fresh-machine-check: interrupted" >&2; exit 130' INT
trap 'exit 143' TERM

mount_in() {  # mount_in TARGET ARGS...: mount under the root, remembered for cleanup
  local target=$root$1
  shift
  mkdir -p "$target"
  mount "$@" "$target"
  mounted+=("$target")
}

say "building a minimal Debian 12 root in $root (minbase + ca-certificates; cache $cache)"
# the cache idiom of mmdebstrap(1): keep the essential packages' .debs (essential/unlink skipped), copy the
# cache in before apt runs and the new .debs out at the end
mmdebstrap --quiet --mode=root --variant=minbase --include=ca-certificates --skip=essential/unlink \
  --setup-hook='mkdir -p "$1"/var/cache/apt/archives/' \
  --setup-hook="sync-in $cache /var/cache/apt/archives/" \
  --customize-hook="sync-out /var/cache/apt/archives $cache" \
  bookworm "$root" \
  "deb $mirror bookworm main" "deb $mirror bookworm-updates main" "deb $security bookworm-security main"
packages_before=$(chroot "$root" dpkg-query -W | wc -l)
say "root built: $(du -sh --one-file-system "$root" | cut -f1), $packages_before packages"

say "copying a clean clone of $(git -C "$repo" rev-parse --short HEAD) into /src/ridgeline"
git clone -q --no-hardlinks "$repo" "$root/src/ridgeline"
rm -rf "$root/src/ridgeline/.git/hooks"
cp -L /etc/resolv.conf "$root/etc/resolv.conf"

mount_in /proc -t proc proc
mount_in /sys -t sysfs sysfs
mount_in /dev --bind /dev
mount_in /dev/pts --bind /dev/pts
mount_in /var/cache/apt/archives --bind "$cache"

inside() {  # inside CMD...: runs in the root as a new user's login shell would, from the clone
  say "inside: $*"
  chroot "$root" /usr/bin/env -i HOME=/root LANG=C.UTF-8 TERM=dumb PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin \
    /bin/bash -c 'cd /src/ridgeline && "$@"' bash "$@"
}

inside scripts/quickstart.sh summary --model resnet18
inside build/release/ridgeline profile --layer "conv2d:in_channels=16,out_channels=32,kernel_size=3,padding=1" \
  --input 1x16x32x32 --quick --device cpu
if [[ $with_tests == 1 ]]; then
  inside scripts/test.sh
fi
say "ridgeline's scripts installed $(($(chroot "$root" dpkg-query -W | wc -l) - packages_before)) packages into the root"
say "passed"
