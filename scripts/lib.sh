# Shared by the scripts in scripts/: package list, installation, cache paths.
# shellcheck shell=bash

AI_FABRIC_ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
# Caches live outside the checkout so that fresh clones build fast on the same machine.
AI_FABRIC_CACHE=${AI_FABRIC_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/ai-fabric}
export CCACHE_DIR=${CCACHE_DIR:-$AI_FABRIC_CACHE/ccache}
# Paths relative to the checkout: clones and worktrees elsewhere share cache hits.
export CCACHE_BASEDIR=${CCACHE_BASEDIR:-$AI_FABRIC_ROOT}
# Debian's interpreter: it sees the python3-* packages installed by apt.
AI_FABRIC_PYTHON=/usr/bin/python3
[ -x "$AI_FABRIC_PYTHON" ] || AI_FABRIC_PYTHON=python3

# Debian 12 packages: ns-3's CMake package config needs libns3-dev, ns3 and libgsl-dev together.
AI_FABRIC_PACKAGES=(
    cmake g++ make ccache pkg-config
    libns3-dev ns3 libgsl-dev
    libboost-dev libboost-graph-dev
    libsqlite3-dev sqlite3 libjemalloc-dev
    googletest libgtest-dev libbenchmark-dev
    nlohmann-json3-dev
    libprotobuf-dev protobuf-compiler
    python3 python3-matplotlib
    tshark
    clang-format
)

af_log() {
    printf '[%s] %s\n' "$(date +%H:%M:%S)" "$*" >&2
}

af_as_root() {
    if [ "$(id -u)" -eq 0 ]; then
        "$@"
    elif command -v sudo >/dev/null 2>&1; then
        sudo "$@"
    else
        echo "error: '$*' needs root and sudo is not available" >&2
        return 1
    fi
}

# Installs the Debian packages that are missing; does nothing when all are there.
af_install_packages() {
    local missing=() p
    for p in "$@"; do
        if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed"; then
            missing+=("$p")
        fi
    done
    [ ${#missing[@]} -eq 0 ] && return 0
    if ! command -v apt-get >/dev/null 2>&1; then
        echo "error: missing packages ${missing[*]} and no apt-get (ai-fabric targets Debian 12)" >&2
        return 1
    fi
    af_log "installing Debian packages: ${missing[*]}"
    export DEBIAN_FRONTEND=noninteractive
    af_as_root apt-get update -qq
    af_as_root apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
}

# Configures (first time) and builds a standalone tree: build/ by default,
# build-sanitize/ with AI_FABRIC_SANITIZE=1 (ASan + UBSan), build-mpi/ with
# AI_FABRIC_NS3_MPI_SOURCE=<ns-3 source tree> (ns-3's mpi module from source, scripts/check-mpi).
af_build_dir() {
    if [ -n "${AI_FABRIC_NS3_MPI_SOURCE:-}" ]; then
        echo "$AI_FABRIC_ROOT/build-mpi" # scripts/check-mpi: ns-3's mpi module from source
    elif [ "${AI_FABRIC_SANITIZE:-0}" = 1 ]; then
        echo "$AI_FABRIC_ROOT/build-sanitize"
    else
        echo "$AI_FABRIC_ROOT/build"
    fi
}

af_build_standalone() {
    local build_dir
    build_dir=$(af_build_dir)
    local werror=OFF
    [ "${CI:-}" = "true" ] && werror=ON
    local extra=()
    if [ "${AI_FABRIC_SANITIZE:-0}" = 1 ]; then
        # ASan instrumentation makes gcc 12 report false -Wmaybe-uninitialized inside
        # libstdc++ (std::regex's std::function); the Release build keeps -Werror.
        werror=OFF
        # -O1 -g1 (AddressSanitizer's recommended level; line tables for its stack
        # traces) compiles the suite in less than half the time of -O2 -g.
        extra=(-DCMAKE_BUILD_TYPE=RelWithDebInfo
            "-DCMAKE_CXX_FLAGS_RELWITHDEBINFO=-O1 -g1 -DNDEBUG"
            "-DCMAKE_CXX_FLAGS=-fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=undefined"
            "-DCMAKE_EXE_LINKER_FLAGS=-fsanitize=address,undefined"
            "-DCMAKE_SHARED_LINKER_FLAGS=-fsanitize=address,undefined"
            -DAI_FABRIC_ALLOCATOR=system)
    else
        extra=(-DCMAKE_BUILD_TYPE=Release -DAI_FABRIC_ALLOCATOR=jemalloc)
    fi
    [ -n "${AI_FABRIC_NS3_MPI_SOURCE:-}" ] && extra+=("-DAI_FABRIC_NS3_MPI_SOURCE=$AI_FABRIC_NS3_MPI_SOURCE")
    mkdir -p "$CCACHE_DIR"
    # A cache configured without -Werror would let CI's warnings through here unseen.
    local cached_werror=""
    [ -f "$build_dir/CMakeCache.txt" ] &&
        cached_werror=$(sed -n 's/^AI_FABRIC_WERROR:BOOL=//p' "$build_dir/CMakeCache.txt")
    if [ ! -f "$build_dir/CMakeCache.txt" ] || [ "${AI_FABRIC_RECONFIGURE:-}" = 1 ] ||
        [ "$cached_werror" != "$werror" ]; then
        cmake -S "$AI_FABRIC_ROOT" -B "$build_dir" "${extra[@]}" \
            -DAI_FABRIC_WERROR=$werror >"$build_dir.configure.log" 2>&1 || {
            cat "$build_dir.configure.log" >&2
            return 1
        }
    fi
    cmake --build "$build_dir" -j "$(nproc)" "$@"
}

# ns-3 source trees for the in-tree builds (scripts/check-in-tree, scripts/check-mpi).
AI_FABRIC_NS3_VERSION=3.37
AI_FABRIC_NS3_SOURCE=$AI_FABRIC_CACHE/ns3-source

# Debian's source package: enable deb-src by deriving it from the system's own
# apt sources (so no mirror is named here), then download without unpacking.
af_fetch_ns3_source() {
    local src_dir=$AI_FABRIC_NS3_SOURCE
    mkdir -p "$src_dir"
    if ls "$src_dir"/ns3_"$AI_FABRIC_NS3_VERSION"*.orig.tar.* >/dev/null 2>&1; then
        return 0
    fi
    local list=/etc/apt/sources.list.d/ai-fabric-deb-src.sources
    if ! apt-get source --print-uris ns3 >/dev/null 2>&1; then
        local tmp
        tmp=$(mktemp)
        if [ -f /etc/apt/sources.list.d/debian.sources ]; then
            sed 's/^Types:.*/Types: deb-src/' /etc/apt/sources.list.d/debian.sources >"$tmp"
        elif [ -f /etc/apt/sources.list ]; then
            # one-line format: turn every "deb" line into "deb-src", written as a .list
            list=/etc/apt/sources.list.d/ai-fabric-deb-src.list
            sed -n 's/^deb \(.*\)/deb-src \1/p' /etc/apt/sources.list >"$tmp"
        else
            echo "error: no Debian apt source found to derive deb-src from" >&2
            return 1
        fi
        af_as_root install -m 644 "$tmp" "$list"
        rm -f "$tmp"
        af_as_root apt-get update -qq
    fi
    (cd "$src_dir" && apt-get source --download-only -qq ns3 2>&1 | grep -v "unsandboxed" || true)
    if ! ls "$src_dir"/ns3_"$AI_FABRIC_NS3_VERSION"*.orig.tar.* >/dev/null 2>&1; then
        echo "error: could not download Debian's ns3 $AI_FABRIC_NS3_VERSION source package" >&2
        return 1
    fi
}

# A fresh ns-3 tree (without the module) at $1.
af_unpack_ns3_tree() {
    local tree=$1
    rm -rf "$tree"
    mkdir -p "$tree"
    tar -xf "$(ls "$AI_FABRIC_NS3_SOURCE"/ns3_"$AI_FABRIC_NS3_VERSION"*.orig.tar.* | head -n 1)" \
        -C "$tree" --strip-components=2 \
        "ns-allinone-$AI_FABRIC_NS3_VERSION/ns-$AI_FABRIC_NS3_VERSION"
}

# Replaces contrib/ai-fabric in the ns-3 tree $1 by this checkout's files.  tar keeps
# modification times, so an incremental build recompiles only what changed.
af_copy_module_into() {
    local dest=$1/contrib/ai-fabric
    rm -rf "$dest"
    mkdir -p "$dest"
    tar -C "$AI_FABRIC_ROOT" --exclude=./build --exclude='./build-*' --exclude=./.git \
        --exclude=./results -cf - . | tar -C "$dest" -xf -
}
