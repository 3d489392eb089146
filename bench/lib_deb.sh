# SPDX-License-Identifier: Apache-2.0
# Sourced by the benches that read Debian packages: fetch_deb, unpack_deb and largest.
# The caller defines CACHE, apt_opts (apt-get's options), say, die and as_root.

# fetch_deb PKG: PKG's .deb in $CACHE/debs, downloaded unless one is there; prints its path.
fetch_deb() {
	local pkg=$1 deb
	mkdir -p "$CACHE/debs"
	deb=$(compgen -G "$CACHE/debs/${pkg}_*.deb" | head -n 1 || true)
	if [ -z "$deb" ]; then
		say "downloading $pkg"
		if ! (cd "$CACHE/debs" && apt-get "${apt_opts[@]}" -q download "$pkg" >/dev/null); then
			say "apt-get download $pkg failed; running apt-get update"
			as_root apt-get update -q >/dev/null || die "apt-get update failed"
			(cd "$CACHE/debs" && apt-get "${apt_opts[@]}" -q download "$pkg" >/dev/null) ||
				die "cannot download $pkg"
		fi
		deb=$(compgen -G "$CACHE/debs/${pkg}_*.deb" | head -n 1)
	fi
	echo "$deb"
}

# unpack_deb PKG DIR: PKG's .deb unpacked into DIR (again only when the .deb changed); prints DIR.
unpack_deb() {
	local deb dir=$2
	deb=$(fetch_deb "$1")
	if [ ! -f "$dir/.unpacked" ] || [ "$(cat "$dir/.unpacked")" != "$(basename "$deb")" ]; then
		rm -rf "$dir" && mkdir -p "$dir"
		dpkg-deb -x "$deb" "$dir"
		basename "$deb" >"$dir/.unpacked"
	fi
	echo "$dir"
}

# largest DIR: the largest build-ID debug file under DIR/usr/lib/debug/.build-id.
largest() {
	find "$1/usr/lib/debug/.build-id" -type f -name '*.debug' -printf '%s %p\n' |
		sort -n | tail -n 1 | cut -d' ' -f2-
}
