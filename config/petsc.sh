#!/usr/bin/env bash
# Provide a CUDA-enabled PETSc for petscgpumat and print where it is.
#
#   config/petsc.sh [--version=3.26.1] [--precision=single|double] [--64-bit-indices] [--cuda-arch=90]
#                   [--print=env|dir|version] [--no-shared-cache] [--rebuild]
#
# Supported PETSc: 3.22 to 3.26 (the default, and the newest release here, is 3.26.1; PETSC_VERSION in the
# environment or --version picks another release, e.g. 3.22.5). Order of preference:
#   1. PETSC_DIR (and PETSC_ARCH) from the environment, if that PETSc is in the supported range and was
#      configured with CUDA (nothing is built; anything else is a clear error, not silently replaced);
#   2. the cache, $PETSCGPUMAT_CACHE (default ~/.cache/petscgpumat), keyed by version and options;
#   3. a matching prebuilt archive in ../shared/cache/ (unpacked into the cache);
#   4. a build from PETSc's official source distribution of that release (PyPI's `petsc` sdist), with the
#      patches in config/patches/<major.minor>/ where that release needs them for CUDA 13 (3.22 does; 3.26
#      needs none). Debian's OpenMPI and BLAS/LAPACK are installed with apt-get if missing (listed first).
#
# Standard output is only the answer (--print=env: PETSC_DIR=... and PETSC_ARCH=... lines, suitable
# for `eval`; --print=dir: the directory alone; --print=version: the PETSc version). Progress goes to
# standard error, build logs to the cache.
set -euo pipefail

DEFAULT_PETSC_VERSION=3.26.1
SUPPORTED_MIN=3.22 SUPPORTED_MAX=3.26
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
root=$(dirname "$here")

version=${PETSC_VERSION:-$DEFAULT_PETSC_VERSION}
precision=double
indices=32
cuda_arch=${PETSCGPUMAT_CUDA_ARCH:-90}
print=env
use_shared_cache=1
rebuild=0
for arg in "$@"; do
  case "$arg" in
    --version=*) version=${arg#--version=} ;;
    --precision=single | --precision=double) precision=${arg#--precision=} ;;
    --single) precision=single ;;
    --64-bit-indices) indices=64 ;;
    --cuda-arch=*) cuda_arch=${arg#--cuda-arch=} ;;
    --print=env | --print=dir | --print=version) print=${arg#--print=} ;;
    --no-shared-cache) use_shared_cache=0 ;;
    --rebuild) rebuild=1 ;;
    -h | --help) sed -n '2,20p' "${BASH_SOURCE[0]}" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) echo "config/petsc.sh: unknown argument '$arg' (see --help)" >&2; exit 2 ;;
  esac
done
[[ $cuda_arch =~ ^[0-9]+a?$ ]] || { echo "config/petsc.sh: bad --cuda-arch '$cuda_arch' (e.g. 90)" >&2; exit 2; }

say() { echo "petsc.sh: $*" >&2; }
# minor series "3.22" of a version "3.22.5"; a version's rank for comparisons
series() { echo "$1" | cut -d. -f1,2; }
rank() { local a b; IFS=. read -r a b _ <<<"$1"; echo $((a * 100 + b)); }
in_range() { (($(rank "$1") >= $(rank $SUPPORTED_MIN) && $(rank "$1") <= $(rank $SUPPORTED_MAX))); }
answer() { # $1 = PETSC_DIR, $2 = PETSC_ARCH (may be empty for a prefix install), $3 = version
  case $print in
    dir) echo "$1${2:+/$2}" ;;
    version) echo "$3" ;;
    *) printf 'PETSC_DIR=%s\nPETSC_ARCH=%s\n' "$1" "$2" ;;
  esac
  exit 0
}
include_dir() { # include directory holding petscconf.h for a PETSC_DIR/PETSC_ARCH pair
  if [[ -n $2 && -f $1/$2/include/petscconf.h ]]; then echo "$1/$2/include"; else echo "$1/include"; fi
}
version_of() { # the PETSc version of a PETSC_DIR (petscversion.h sits in $PETSC_DIR/include)
  local h=$1/include/petscversion.h
  [[ -f $h ]] || return 1
  awk '/#define PETSC_VERSION_(MAJOR|MINOR|SUBMINOR) /{v[$2]=$3} END{print v["PETSC_VERSION_MAJOR"]"."v["PETSC_VERSION_MINOR"]"."v["PETSC_VERSION_SUBMINOR"]}' "$h"
}

# 1. A PETSc the user already has.
if [[ -n ${PETSC_DIR:-} ]]; then
  inc=$(include_dir "$PETSC_DIR" "${PETSC_ARCH:-}")
  [[ -f $inc/petscconf.h ]] || { say "PETSC_DIR=$PETSC_DIR (PETSC_ARCH=${PETSC_ARCH:-}) has no petscconf.h: not a configured PETSc"; exit 1; }
  have=$(version_of "$PETSC_DIR") || { say "PETSC_DIR=$PETSC_DIR has no include/petscversion.h"; exit 1; }
  if ! in_range "$have"; then
    say "the PETSc at PETSC_DIR=$PETSC_DIR is $have; petscgpumat supports PETSc $SUPPORTED_MIN to $SUPPORTED_MAX."
    say "unset PETSC_DIR to let this script build PETSc $DEFAULT_PETSC_VERSION into its cache."
    exit 1
  fi
  if ! grep -q '^#define PETSC_HAVE_CUDA 1' "$inc/petscconf.h"; then
    say "the PETSc $have at PETSC_DIR=$PETSC_DIR was configured without CUDA; petscgpumat needs --with-cuda."
    say "unset PETSC_DIR to let this script build a CUDA PETSc $DEFAULT_PETSC_VERSION into its cache."
    exit 1
  fi
  say "using PETSc $have from the environment ($inc/petscconf.h)"
  answer "$PETSC_DIR" "${PETSC_ARCH:-}" "$have"
fi

[[ $version =~ ^[0-9]+\.[0-9]+\.[0-9]+$ ]] || { say "bad PETSc version '$version' (e.g. $DEFAULT_PETSC_VERSION)"; exit 2; }
in_range "$version" || { say "PETSc $version is outside the supported range $SUPPORTED_MIN to $SUPPORTED_MAX"; exit 2; }

# 2. The cache.
cuda_home=${CUDA_HOME:-/usr/local/cuda}
[[ -x $cuda_home/bin/nvcc ]] || { say "no nvcc in $cuda_home/bin (set CUDA_HOME)"; exit 1; }
cuda_version=$("$cuda_home/bin/nvcc" --version | sed -n 's/.*release \([0-9.]*\),.*/\1/p')
key=petsc-$version-cuda$cuda_version-sm$cuda_arch-$precision-int$indices
cache=${PETSCGPUMAT_CACHE:-$HOME/.cache/petscgpumat}
prefix=$cache/$key
stamp=$prefix/.petscgpumat-complete
patches=$here/patches/$(series "$version")
patch_files=()
[[ -d $patches ]] && patch_files=("$patches"/*.patch)
patch_sum=none
((${#patch_files[@]})) && patch_sum=$(cat "${patch_files[@]}" | sha256sum | cut -c1-16)
if [[ $rebuild == 0 && -f $stamp ]] && grep -qx "patches=$patch_sum" "$stamp"; then
  answer "$prefix" "" "$version"
fi

# 3. A prebuilt archive in ../shared/cache/ with exactly this key.
shared_archive=${PETSCGPUMAT_SHARED_CACHE:-$root/../shared/cache}/$key.tar.xz
if [[ $rebuild == 0 && $use_shared_cache == 1 && -f $shared_archive ]]; then
  say "unpacking the prebuilt $shared_archive"
  rm -rf "$prefix" && mkdir -p "$cache"
  if tar -xJf "$shared_archive" -C "$cache" && [[ -f $prefix/include/petscconf.h ]] &&
     grep -q '^#define PETSC_HAVE_CUDA 1' "$prefix/include/petscconf.h"; then
    # the archive was installed under another prefix: its text files (make variables, pkg-config) name it
    old_prefix=$(sed -n 's/^prefix=//p' "$prefix/lib/pkgconfig/petsc.pc")
    if [[ -n $old_prefix && $old_prefix != "$prefix" ]]; then
      grep -rlF "$old_prefix" "$prefix/lib/petsc/conf" "$prefix/lib/pkgconfig" "$prefix/include" "$prefix/share" 2>/dev/null |
        xargs -r sed -i "s|$old_prefix|$prefix|g"
    fi
    echo "patches=$patch_sum" > "$stamp"; echo "source=$shared_archive" >> "$stamp"
    answer "$prefix" "" "$version"
  fi
  say "the prebuilt archive did not hold a CUDA PETSc at $prefix; building from source instead"
  rm -rf "$prefix"
fi

# 4. Build from PETSc's official source distribution.
logs=$cache/logs/$key
build=$cache/build/$key
mkdir -p "$logs" "$cache/src"
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 # configure runs MPI test programs

need_pkgs=()
# PETSc's needs, and zlib for petscgpumat's Matrix Market reader (.mtx.gz)
for p in libopenmpi-dev openmpi-bin liblapack-dev libblas-dev xz-utils python3 make zlib1g-dev; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || need_pkgs+=("$p")
done
if ((${#need_pkgs[@]})); then
  sudo_cmd=""
  if [[ $(id -u) != 0 ]]; then
    if sudo -n true 2>/dev/null; then sudo_cmd="sudo -n"; else
      say "missing Debian packages: ${need_pkgs[*]}"
      say "install them (sudo apt-get install ${need_pkgs[*]}) or point PETSC_DIR at a CUDA PETSc of your own"
      exit 1
    fi
  fi
  say "installing Debian packages: ${need_pkgs[*]}"
  $sudo_cmd apt-get update -q >"$logs/apt-update.log" 2>&1
  DEBIAN_FRONTEND=noninteractive $sudo_cmd apt-get install -y -q "${need_pkgs[@]}" >"$logs/apt-install.log" 2>&1 ||
    { tail -5 "$logs/apt-install.log" >&2; say "apt-get install failed; see $logs/apt-install.log"; exit 1; }
fi

say "fetching PETSc $version's source distribution from PyPI"
tarball=$(python3 "$here/fetch_petsc_source.py" "$version" "$cache/src") || { say "could not fetch PETSc $version"; exit 1; }

say "unpacking PETSc $version in $build${patch_files:+ and applying ${#patch_files[@]} patches from config/patches/$(series "$version")}"
rm -rf "$build" && mkdir -p "$build"
tar -xzf "$tarball" -C "$build" --strip-components=1
for p in "${patch_files[@]}"; do
  patch -d "$build" -p1 --forward --quiet <"$p" || { say "patch $(basename "$p") does not apply"; exit 1; }
done

opts=(
  --prefix="$prefix" --with-shared-libraries=1 --with-debugging=0 --with-fc=0 --with-x=0
  --with-cc=mpicc.openmpi --with-cxx=mpicxx.openmpi --with-mpiexec=mpiexec.openmpi
  --with-cuda=1 --with-cuda-dir="$cuda_home" --with-cuda-arch="$cuda_arch"
  --with-blaslapack-lib="-llapack -lblas" --with-precision="$precision"
  COPTFLAGS=-O3 CXXOPTFLAGS=-O3 CUDAOPTFLAGS=-O3
)
# releases whose configure still links libnvToolsExt (patched away) find CUDA 13's header-only NVTX 3 here
[[ -f $patches/configure-cppflags ]] && opts+=(CPPFLAGS="$(sed "s|@CUDA_HOME@|$cuda_home|g" "$patches/configure-cppflags")")
[[ $indices == 64 ]] && opts+=(--with-64-bit-indices=1)
arch=arch-petscgpumat
start=$SECONDS
say "configuring (log: $logs/configure.log; about 3 minutes on 2 cores)"
(cd "$build" && python3 ./configure PETSC_ARCH=$arch "${opts[@]}") >"$logs/configure.log" 2>&1 ||
  { tail -30 "$logs/configure.log" >&2; say "configure failed; see $logs/configure.log and $build/configure.log"; exit 1; }
say "building (log: $logs/make.log; 10 to 20 minutes on 2 cores)"
(cd "$build" && make PETSC_DIR="$build" PETSC_ARCH=$arch MAKE_NP="$(nproc)" all) >"$logs/make.log" 2>&1 ||
  { tail -30 "$logs/make.log" >&2; say "build failed; see $logs/make.log"; exit 1; }
(cd "$build" && make PETSC_DIR="$build" PETSC_ARCH=$arch install) >"$logs/install.log" 2>&1 ||
  { tail -30 "$logs/install.log" >&2; say "install failed; see $logs/install.log"; exit 1; }
{ echo "patches=$patch_sum"; echo "source=$tarball"; echo "options=${opts[*]}"; echo "seconds=$((SECONDS - start))"; } >"$stamp"
say "PETSc $version installed in $prefix ($((SECONDS - start)) s)"
rm -rf "$build"
answer "$prefix" "" "$version"
