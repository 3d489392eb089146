// SPDX-License-Identifier: Apache-2.0
/*
 * cmd/lidiagen/util/json_tree.c, the reader of a container image's JSON:
 * nested values, escapes (\u as UTF-8, surrogates as '?'), and what it
 * refuses (trailing bytes, nesting past its depth, bad escapes, control
 * characters in strings).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../../cmd/lidiagen/util/json_tree.c"
#include "unit.h"

static bool refused(const char *text)
{
	struct jt *t = jt_parse(text);

	jt_free(t);
	return t == NULL;
}

int main(void)
{
	struct jt *t =
		jt_parse(" {\"manifests\": [{\"digest\": \"sha256:ab\", \"platform\": "
			 "{\"os\": \"linux\", \"architecture\": \"arm64\"}, \"size\": 12}],"
			 " \"n\": null, \"b\": true, \"s\": \"a\\\"\\\\\\/\\n\\u00e9\\ud800\"} ");
	const struct jt *m = jt_get(t, "manifests");
	char *deep = malloc(200001);

	CHECK(t && m && m->type == JT_ARRAY && m->n == 1, "an object holding an array of objects");
	CHECK(m && !strcmp(jt_str(jt_get(&m->kids[0], "platform"), "architecture"), "arm64"),
	      "a string two objects down");
	CHECK(m && !jt_str(&m->kids[0], "size") && jt_get(&m->kids[0], "size")->type == JT_NUMBER,
	      "a number is no string");
	CHECK(t && !strcmp(jt_str(t, "s"), "a\"\\/\n\xc3\xa9?"),
	      "escapes; \\u as UTF-8, a surrogate as ?");
	CHECK(t && jt_get(t, "n")->type == JT_NULL && jt_get(t, "b")->type == JT_BOOL,
	      "null and true");
	CHECK(!jt_get(t, "absent") && !jt_str(NULL, "x"), "an absent key; NULL");
	jt_free(t);
	CHECK(refused("{} x") && refused("{\"a\" 1}") && refused("[1,]x") && refused(""),
	      "trailing bytes, a missing colon, nothing: refused");
	CHECK(refused("\"\\q\"") && refused("\"\\u12\"") && refused("\"a\nb\"") && refused("\"abc"),
	      "bad escapes, a raw newline, an unclosed string: refused");
	if (!deep)
		abort();
	memset(deep, '[', 200000);
	deep[200000] = '\0';
	CHECK(refused(deep), "200000 levels of nesting: refused, the stack untouched");
	memset(deep, '[', 64);
	memset(deep + 64, ']', 64);
	deep[128] = '\0';
	CHECK(!refused(deep), "64 levels: read");
	free(deep);
	return unit_exit();
}
