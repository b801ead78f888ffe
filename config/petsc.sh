#!/usr/bin/env bash
# Provide a CUDA-enabled PETSc for petscgpumat and print where it is.
#
#   config/petsc.sh [--precision=single|double] [--64-bit-indices] [--cuda-arch=90]
#                   [--print=env|dir] [--no-shared-cache] [--rebuild]
#
# Order of preference:
#   1. PETSC_DIR (and PETSC_ARCH) from the environment, if that PETSc was configured with CUDA
#      (nothing is built; a PETSc without CUDA is an error, not silently replaced);
#   2. the cache, $PETSCGPUMAT_CACHE (default ~/.cache/petscgpumat), keyed by version and options;
#   3. a matching prebuilt archive in ../shared/cache/ (unpacked into the cache);
#   4. a build from Debian's source package of PETSc 3.22.5 with our CUDA 13 patches (config/patches/).
#
# Standard output is only the answer (--print=env: PETSC_DIR=... and PETSC_ARCH=... lines, suitable
# for `eval`; --print=dir: the directory alone). Progress goes to standard error, build logs to the cache.
set -euo pipefail

PETSC_VERSION=3.22.5
DEBIAN_SRC_VERSION=3.22.5+dfsg1-2
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
root=$(dirname "$here")

precision=double
indices=32
cuda_arch=${PETSCGPUMAT_CUDA_ARCH:-90}
print=env
use_shared_cache=1
rebuild=0
for arg in "$@"; do
  case "$arg" in
    --precision=single | --precision=double) precision=${arg#--precision=} ;;
    --single) precision=single ;;
    --64-bit-indices) indices=64 ;;
    --cuda-arch=*) cuda_arch=${arg#--cuda-arch=} ;;
    --print=env | --print=dir) print=${arg#--print=} ;;
    --no-shared-cache) use_shared_cache=0 ;;
    --rebuild) rebuild=1 ;;
    -h | --help) sed -n '2,17p' "${BASH_SOURCE[0]}" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) echo "config/petsc.sh: unknown argument '$arg' (see --help)" >&2; exit 2 ;;
  esac
done
[[ $cuda_arch =~ ^[0-9]+a?$ ]] || { echo "config/petsc.sh: bad --cuda-arch '$cuda_arch' (e.g. 90)" >&2; exit 2; }

say() { echo "petsc.sh: $*" >&2; }
answer() { # $1 = PETSC_DIR, $2 = PETSC_ARCH (may be empty for a prefix install)
  if [[ $print == dir ]]; then echo "$1${2:+/$2}"; else printf 'PETSC_DIR=%s\nPETSC_ARCH=%s\n' "$1" "$2"; fi
  exit 0
}
conf_header() { # path of petscconf.h for a PETSC_DIR/PETSC_ARCH pair
  if [[ -n $2 && -f $1/$2/include/petscconf.h ]]; then echo "$1/$2/include/petscconf.h"; else echo "$1/include/petscconf.h"; fi
}

# 1. A PETSc the user already has.
if [[ -n ${PETSC_DIR:-} ]]; then
  conf=$(conf_header "$PETSC_DIR" "${PETSC_ARCH:-}")
  [[ -f $conf ]] || { say "PETSC_DIR=$PETSC_DIR (PETSC_ARCH=${PETSC_ARCH:-}) has no petscconf.h: not a configured PETSc"; exit 1; }
  if ! grep -q '^#define PETSC_HAVE_CUDA 1' "$conf"; then
    say "the PETSc at PETSC_DIR=$PETSC_DIR was configured without CUDA; petscgpumat needs --with-cuda."
    say "unset PETSC_DIR to let this script build a CUDA PETSc $PETSC_VERSION into its cache."
    exit 1
  fi
  say "using the PETSc from the environment ($conf)"
  answer "$PETSC_DIR" "${PETSC_ARCH:-}"
fi

# 2. The cache.
cuda_home=${CUDA_HOME:-/usr/local/cuda}
[[ -x $cuda_home/bin/nvcc ]] || { say "no nvcc in $cuda_home/bin (set CUDA_HOME)"; exit 1; }
cuda_version=$("$cuda_home/bin/nvcc" --version | sed -n 's/.*release \([0-9.]*\),.*/\1/p')
key=petsc-$PETSC_VERSION-cuda$cuda_version-sm$cuda_arch-$precision-int$indices
cache=${PETSCGPUMAT_CACHE:-$HOME/.cache/petscgpumat}
prefix=$cache/$key
stamp=$prefix/.petscgpumat-complete
patch_sum=$(cat "$here"/patches/*.patch | sha256sum | cut -c1-16)
if [[ $rebuild == 0 && -f $stamp ]] && grep -qx "patches=$patch_sum" "$stamp"; then
  answer "$prefix" ""
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
    answer "$prefix" ""
  fi
  say "the prebuilt archive did not hold a CUDA PETSc at $prefix; building from source instead"
  rm -rf "$prefix"
fi

# 4. Build from Debian's source package.
logs=$cache/logs/$key
build=$cache/build/$key
mkdir -p "$logs" "$cache/src"
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 # configure runs MPI test programs
sudo_cmd=""
[[ $(id -u) == 0 ]] || sudo_cmd=sudo

need_pkgs=()
# PETSc's needs, and zlib for petscgpumat's Matrix Market reader (.mtx.gz)
for p in libopenmpi-dev openmpi-bin liblapack-dev libblas-dev dpkg-dev xz-utils python3 make zlib1g-dev; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || need_pkgs+=("$p")
done
if ((${#need_pkgs[@]})); then
  say "installing Debian packages: ${need_pkgs[*]}"
  $sudo_cmd apt-get update -q >"$logs/apt-update.log" 2>&1
  DEBIAN_FRONTEND=noninteractive $sudo_cmd apt-get install -y -q "${need_pkgs[@]}" >"$logs/apt-install.log" 2>&1
fi

tarball=$cache/src/petsc_$PETSC_VERSION+dfsg1.orig.tar.xz
if [[ ! -f $tarball ]]; then
  src_lists=$(grep -lrsE '^(Types:.*deb-src|deb-src )' /etc/apt/sources.list /etc/apt/sources.list.d/ || true)
  if [[ -z $src_lists ]] || ! grep -qs trixie $src_lists; then
    say "adding a deb-src entry for Debian trixie (/etc/apt/sources.list.d/petscgpumat-trixie-src.sources)"
    $sudo_cmd tee /etc/apt/sources.list.d/petscgpumat-trixie-src.sources >/dev/null <<'EOF'
Types: deb-src
URIs: http://deb.debian.org/debian
Suites: trixie
Components: main
Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg
EOF
  fi
  say "fetching Debian's source package petsc=$DEBIAN_SRC_VERSION"
  $sudo_cmd apt-get update -q >"$logs/apt-update-src.log" 2>&1
  (cd "$cache/src" && apt-get source --download-only --tar-only "petsc=$DEBIAN_SRC_VERSION") >"$logs/apt-source.log" 2>&1 ||
    { say "apt-get source failed; see $logs/apt-source.log"; exit 1; }
fi

say "unpacking and patching PETSc $PETSC_VERSION in $build"
rm -rf "$build" && mkdir -p "$build"
tar -xJf "$tarball" -C "$build" --strip-components=1
for p in "$here"/patches/*.patch; do
  patch -d "$build" -p1 --forward --quiet <"$p" || { say "patch $(basename "$p") does not apply"; exit 1; }
done

opts=(
  --prefix="$prefix" --with-shared-libraries=1 --with-debugging=0 --with-fc=0 --with-x=0
  --with-cc=mpicc.openmpi --with-cxx=mpicxx.openmpi --with-mpiexec=mpiexec.openmpi
  --with-cuda=1 --with-cuda-dir="$cuda_home" --with-cuda-arch="$cuda_arch"
  --with-blaslapack-lib="-llapack -lblas" --with-precision="$precision"
  COPTFLAGS=-O3 CXXOPTFLAGS=-O3 CUDAOPTFLAGS=-O3 CPPFLAGS="-I$cuda_home/include/nvtx3"
)
[[ $indices == 64 ]] && opts+=(--with-64-bit-indices=1)
arch=arch-petscgpumat
start=$SECONDS
say "configuring (log: $logs/configure.log; about 3 minutes on 2 cores)"
(cd "$build" && python3 ./configure PETSC_ARCH=$arch "${opts[@]}") >"$logs/configure.log" 2>&1 ||
  { tail -30 "$logs/configure.log" >&2; say "configure failed; see $logs/configure.log and $build/configure.log"; exit 1; }
say "building (log: $logs/make.log; about 6 minutes on 2 cores)"
(cd "$build" && make PETSC_DIR="$build" PETSC_ARCH=$arch MAKE_NP="$(nproc)" all) >"$logs/make.log" 2>&1 ||
  { tail -30 "$logs/make.log" >&2; say "build failed; see $logs/make.log"; exit 1; }
(cd "$build" && make PETSC_DIR="$build" PETSC_ARCH=$arch install) >"$logs/install.log" 2>&1 ||
  { tail -30 "$logs/install.log" >&2; say "install failed; see $logs/install.log"; exit 1; }
{ echo "patches=$patch_sum"; echo "source=$tarball"; echo "options=${opts[*]}"; echo "seconds=$((SECONDS - start))"; } >"$stamp"
say "PETSc $PETSC_VERSION installed in $prefix ($((SECONDS - start)) s)"
rm -rf "$build"
answer "$prefix" ""
