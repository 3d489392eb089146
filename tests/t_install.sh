#!/usr/bin/env bash
# make install / uninstall with PREFIX and DESTDIR; a program built against the
# installed library through pkg-config; the public header compiles alone.
set -u
. "$(dirname "$0")/lib/tap.sh"
. "$(dirname "$0")/lib/env.sh"
top=$(cd "$(dirname "$0")/.." && pwd)
stage=$TEST_TMP/install-stage
rm -rf "$stage"

out=$(make -C "$top" -s install PREFIX=/usr DESTDIR="$stage" 2>&1)
check "make install PREFIX=/usr DESTDIR=..." [ $? -eq 0 ] || diag "$out"
for f in usr/bin/lidiagen usr/lib/liblidia.a usr/lib/liblidia.so usr/lib/liblidia.so.0 \
	usr/include/lidia.h usr/lib/pkgconfig/lidia.pc usr/share/man/man1/lidiagen.1 usr/share/doc/lidiagen/lidia-v1.md \
	usr/share/doc/lidiagen/publishing.md usr/share/doc/lidiagen/ci.md usr/share/doc/lidiagen/plugins.md; do
	check "installed $f" [ -e "$stage/$f" ]
done
# The plugins' page, installed: the same text as plugins/README.md.
check "installed plugins.md is plugins/README.md" cmp -s "$top/plugins/README.md" "$stage/usr/share/doc/lidiagen/plugins.md"
check "lidia.pc names the prefix" grep -q '^prefix=/usr$' "$stage/usr/lib/pkgconfig/lidia.pc"

cat > "$TEST_TMP/consumer.c" <<'C'
#include <lidia.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
int main(void)
{
	struct lidia_builder *b;
	struct lidia_reader *r;
	struct lidia_frame f[4];
	struct lidia_range_desc d = { .va = 0x1000, .length = 0x10, .func = "hello" };
	void *buf;
	size_t size;
	if (lidia_builder_new(&b) || lidia_builder_add(b, &d) || lidia_builder_finalize(b) ||
	    lidia_builder_write_mem(b, &buf, &size))
		return 1;
	if (lidia_reader_open_mem(&r, buf, size, &LIDIA_READER_OPTS(.check_crc = true)))
		return 1;
	int n = lidia_reader_lookup(r, 0x1008, f, 4);
	int ok = n == 1 && !memcmp(f[0].function.ptr, "hello", 5);
	printf("%d %.*s %s\n", n, (int)f[0].function.len, f[0].function.ptr, lidia_version());
	lidia_reader_close(r);
	lidia_builder_free(b);
	free(buf);
	return ok ? 0 : 1;
}
C
export PKG_CONFIG_SYSROOT_DIR=$stage PKG_CONFIG_LIBDIR=$stage/usr/lib/pkgconfig:/usr/lib/x86_64-linux-gnu/pkgconfig:/usr/share/pkgconfig
# Each status is taken at once, before another command replaces $?.
flags=$(pkg-config --cflags --libs lidia 2>"$TEST_TMP/pkg-config.err")
rc=$?
[ $rc -eq 0 ] && grep -qF -e "-I$stage/usr/include" <<<"$flags" &&
	grep -qF -e "-L$stage/usr/lib" <<<"$flags" && grep -qF -e "-llidia" <<<"$flags"
check "pkg-config --cflags --libs lidia names the staged header and library" [ $? -eq 0 ] ||
	diag "exit $rc: $flags" "$(cat "$TEST_TMP/pkg-config.err")"
# A sanitized build (make SANITIZE=...) installs a sanitized library: its users build so too.
san=${SANITIZE:+-fsanitize=$SANITIZE}
out=$(cc -std=c11 -Wall -Werror $san -o "$TEST_TMP/consumer" "$TEST_TMP/consumer.c" $flags 2>&1)
check "a program builds against the installed shared library" [ $? -eq 0 ] || diag "$out"
out=$(LD_LIBRARY_PATH=$stage/usr/lib "$TEST_TMP/consumer" 2>&1)
check "and runs: $out" [ $? -eq 0 ]
pc=$stage/usr/lib/pkgconfig/lidia.pc
cflags=$(pkg-config --cflags lidia 2>&1)
rc=$?
requires=$(sed -n 's/^Requires.private: //p' "$pc")
private=$(pkg-config --libs $requires 2>&1)
rc_private=$?
[ $rc -eq 0 ] && [ -n "$cflags" ] && [ -n "$requires" ] && [ $rc_private -eq 0 ] && [ -n "$private" ]
check "pkg-config --cflags lidia, --libs of its Requires.private ($requires)" [ $? -eq 0 ] ||
	diag "$cflags" "$private"
out=$(cc -std=c11 -Wall -Werror $san -o "$TEST_TMP/consumer-static" "$TEST_TMP/consumer.c" \
	$cflags "$stage/usr/lib/liblidia.a" $private $(sed -n 's/^Libs.private: //p' "$pc") 2>&1)
check "a program links the static library" [ $? -eq 0 ] || diag "$out"
syms=$(nm -D --defined-only "$stage/usr/lib/liblidia.so" 2>&1)
rc=$?
funcs=$(awk '$2 == "T" { print $3 }' <<<"$syms")
others=$(grep -v '^lidia_' <<<"$funcs")
[ $rc -eq 0 ] && [ -n "$funcs" ] && [ -z "$others" ]
check "exports only lidia_ symbols" [ $? -eq 0 ] ||
	diag "nm exit $rc, $(grep -c . <<<"$funcs") functions" "$(head -n 5 <<<"${others:-$syms}")"

printf '#include <lidia.h>\n' > "$TEST_TMP/header.c"
out=$(cc -std=c11 -pedantic -Wall -Wextra -Werror -c -o /dev/null -I "$stage/usr/include" "$TEST_TMP/header.c" 2>&1)
check "lidia.h compiles alone with -std=c11 -pedantic -Werror" [ $? -eq 0 ] || diag "$out"
out=$(c++ -std=c++11 -pedantic -Wall -Werror -x c++ -c -o /dev/null -I "$stage/usr/include" "$TEST_TMP/header.c" 2>&1)
check "lidia.h compiles alone as C++" [ $? -eq 0 ] || diag "$out"

out=$(make -C "$top" -s uninstall PREFIX=/usr DESTDIR="$stage" 2>&1)
check "make uninstall PREFIX=/usr DESTDIR=..." [ $? -eq 0 ] || diag "$out"
left=$(find "$stage" -type f -o -type l 2>&1)
rc=$?
[ $rc -eq 0 ] && [ -z "$left" ]
check "make uninstall removes every installed file" [ $? -eq 0 ] || diag "$left"
