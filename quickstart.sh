#!/bin/sh
# Quick start for a fresh Debian 12 machine.
#   ./quickstart.sh          install what is missing, build, convert lidiagen's own
#                            build outputs into out/ and symbolize one address
#   ./quickstart.sh test     install what is missing, build, run every test
#   JOBS=N ./quickstart.sh   N build jobs (default: the CPUs it may use, at most 8)
# Installing needs root (or sudo); everything else runs as you.
set -eu
cd "$(dirname "$0")"

# Build dependencies: elfutils' libelf/libdw, LLVM's demangler (llvm-16-dev), the compression and
# archive libraries the batch mode links, libcurl and libexpat for publishing to S3, and
# libdebuginfod for --debuginfod (its header; the library is loaded when first needed).
BUILD_DEPS="build-essential pkg-config libelf-dev libdw-dev llvm-16-dev libarchive-dev libyaml-dev
	libzstd-dev libdeflate-dev liblzma-dev libcurl4-openssl-dev nettle-dev libexpat1-dev libdebuginfod-dev"
# Test dependencies: the oracles (llvm-symbolizer from llvm-16, eu-addr2line),
# compilers and linkers for the test programs (gcc, g++, clang, lld, Go
# 1.19, rustc), dwz, debuginfod (the server t_debuginfod.sh fetches from), packagers for
# the batch tests (rpm, cpio, zip), strace (which programs t_cli.sh sees
# executed), the build
# systems of the plugins (cmake, ninja, Debian's Bazel 4), python3 for
# Pyroscope's reader logic, botocore's SigV4 signer and awscli for the S3
# tests (s3rver comes from npm: see install_s3rver); a ppc64 ELFv1
# compiler with its C library (a recommendation apt does not take here) and
# an s390x linker for t_elf_corners.sh's architectures.
TEST_DEPS="python3 python3-yaml python3-botocore awscli nodejs clang-format elfutils debuginfod binutils llvm-16 clang lld golang-1.19-go rustc file dwz rpm cpio zip strace
	zstd cmake ninja-build bazel-bootstrap time gcc-powerpc64-linux-gnu libc6-dev-ppc64-cross
	binutils-s390x-linux-gnu"
# Go 1.20+ writes a newer pclntab (magic 0xfffffff1): the tests build with
# Go 1.22 and 1.23 (Go 1.20+ inline-tree shapes, issue 14) from
# bookworm-backports too.
BACKPORTS_DEPS="golang-1.22-go golang-1.23-go"

install_missing() {
	missing=""
	for p in $*; do
		dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "ok installed" ||
			missing="$missing $p"
	done
	[ -z "$missing" ] && return 0
	echo "installing:$missing"
	if [ "$(id -u)" -eq 0 ]; then sudo=""; else sudo="sudo"; fi
	$sudo apt-get update -qq
	DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends $missing
}

add_backports() {
	grep -rqs '^[^#]*bookworm-backports' /etc/apt/sources.list /etc/apt/sources.list.d/ && return 0
	echo "adding bookworm-backports to the apt sources"
	if [ "$(id -u)" -eq 0 ]; then sudo=""; else sudo="sudo"; fi
	echo 'deb http://deb.debian.org/debian bookworm-backports main' |
		$sudo tee /etc/apt/sources.list.d/bookworm-backports.list >/dev/null
	$sudo apt-get update -qq
}

# s3rver, an S3 server for the publishing tests, pinned by tests/s3rver's
# package-lock.json and installed there (not globally) from the npm registry.
install_s3rver() {
	command -v npm >/dev/null || install_missing npm
	[ -x tests/s3rver/node_modules/.bin/s3rver ] && return 0
	echo "installing s3rver from npm into tests/s3rver"
	(cd tests/s3rver && npm ci --no-audit --no-fund --loglevel=error)
}

# Build jobs: the CPUs this process may use, at most 8 (JOBS=N sets them), so
# that a big or shared machine is not flooded (each job of `make test` may
# itself build a project or run Bazel).
jobs=${JOBS:-$(nproc)}
[ "$jobs" -le 8 ] 2>/dev/null || jobs=8

case "${1:-demo}" in
demo)
	install_missing $BUILD_DEPS
	make -j"$jobs"
	rm -rf out
	# The main job, on a bundled default input: lidiagen's own build outputs.
	build/lidiagen build/lidiagen build/liblidia.so.0 -o out
	id=$(readelf -n build/lidiagen | awk '/Build ID/ { print $3 }')
	file=out/symbolizer/anonymous/$id
	addr=$(nm build/lidiagen | awk '$3 == "lidia_reader_lookup" { print $1 }')
	echo "symbolizing lidia_reader_lookup+0x10 in build/lidiagen with $file:"
	build/lidiagen lookup "$file" "$(printf '0x%x' $((0x$addr + 0x10)))"
	;;
test)
	install_missing $BUILD_DEPS $TEST_DEPS
	add_backports
	install_missing $BACKPORTS_DEPS
	install_s3rver
	make -j"$jobs" test
	;;
*)
	echo "usage: $0 [demo|test]" >&2
	exit 2
	;;
esac
