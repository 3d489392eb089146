// SPDX-License-Identifier: Apache-2.0
/*
 * Container images as deployed (image.h). The first walk of an image input
 * keeps its top-level JSON and the names of its layers' entries, never
 * their bytes; the images its index or manifest describes (those of
 * --platform) are then applied layer over layer, top first, as a
 * container runtime would: the entries each shows make the visible set,
 * and the identify walk looks at those alone. A layer shared by images is
 * one member of the tar: walked once whatever number of images apply it.
 */
#include <errno.h>
#include <search.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "image.h"
#include "json_tree.h"

#define JSON_MAX (4u << 20) /* an image's JSON file read whole: a manifest of thousands of layers */
#define INDEX_DEPTH 4	    /* indexes of indexes followed */

/* A top-level member of the image's tar, as the first walk saw it. */
struct top {
	uint32_t at;
	char *raw;   /* its name as the walk gives it (messages) */
	char *name;  /* without a leading "./" or "/": what JSON names it by */
	char *json;  /* its bytes, if small and neither ELF nor an archive */
	char **ents; /* entry names inside it, if an archive (a layer) */
	size_t n, cap;
};

struct scan {
	struct top *tops;
	size_t n, cap;
	bool oom;
};

/* A set of strings (hsearch_r, sized once): the keys are its own. */
struct strset {
	struct hsearch_data h;
	char **keys;
	size_t n, cap;
};

static const char *norm(const char *name)
{
	while (name[0] == '.' && name[1] == '/')
		name += 2;
	while (name[0] == '/')
		name++;
	return name;
}

static bool set_init(struct strset *s, size_t cap)
{
	*s = (struct strset){ .cap = cap };
	if (!(s->keys = malloc(cap * sizeof(*s->keys))))
		return false;
	if (!hcreate_r(cap * 2 + 16, &s->h)) {
		free(s->keys);
		return false;
	}
	return true;
}

static void set_free(struct strset *s)
{
	if (!s->keys)
		return;
	hdestroy_r(&s->h);
	for (size_t i = 0; i < s->n; i++)
		free(s->keys[i]);
	free(s->keys);
	s->keys = NULL;
}

static bool set_has(struct strset *s, const char *key)
{
	ENTRY e = { .key = (char *)key }, *r;

	return hsearch_r(e, FIND, &r, &s->h) != 0;
}

/* Add key (if new); false when out of memory or past the size it was made for. */
static bool set_add(struct strset *s, const char *key)
{
	ENTRY e, *r;

	if (set_has(s, key))
		return true;
	if (s->n == s->cap || !(e.key = strdup(key)))
		return false;
	e.data = NULL;
	if (!hsearch_r(e, ENTER, &r, &s->h)) {
		free(e.key);
		return false;
	}
	s->keys[s->n++] = e.key;
	return true;
}

/* ---- the first walk ---- */

static bool push(void **v, size_t *n, size_t *cap, size_t size)
{
	void *p;

	if (*n < *cap)
		return true;
	if (!(p = realloc(*v, (*cap ? *cap * 2 : 16) * size)))
		return false;
	*v = p;
	*cap = *cap ? *cap * 2 : 16;
	return true;
}

/* Top-level members are all looked at; a layer's entries are only named. */
static bool scan_want(void *ctx, const struct lidia_archive_member *m)
{
	struct scan *s = ctx;
	struct top *t;

	if (m->depth == 1) {
		if (!push((void **)&s->tops, &s->n, &s->cap, sizeof(*s->tops)))
			return !(s->oom = true);
		t = &s->tops[s->n];
		*t = (struct top){ .at = m->at[0], .raw = strdup(m->name) };
		if (!t->raw || !(t->name = strdup(norm(m->name))))
			return !(s->oom = true);
		s->n++;
		return true;
	}
	if (m->depth != 2 || !s->n || s->tops[s->n - 1].at != m->at[0])
		return false;
	t = &s->tops[s->n - 1];
	if (!push((void **)&t->ents, &t->n, &t->cap, sizeof(*t->ents)) ||
	    !(t->ents[t->n] = strdup(norm(m->name))))
		s->oom = true;
	else
		t->n++;
	return false;
}

/* A link or directory in a layer hides a lower layer's file as a file would. */
static void scan_entry(void *ctx, const struct lidia_archive_member *m)
{
	char name[1024];
	size_t n;

	snprintf(name, sizeof(name), "%s", norm(m->name));
	n = strlen(name);
	while (n && name[n - 1] == '/')
		name[--n] = '\0'; /* a directory's "usr/bin/" */
	if (n && m->depth == 2)
		scan_want(ctx, &(struct lidia_archive_member){
				       .path = m->path, .name = name, .at = m->at, .depth = 2 });
}

static int scan_other(void *ctx, const struct lidia_archive_member *m, const unsigned char *data,
		      size_t size)
{
	struct scan *s = ctx;

	if (m->depth == 1 && s->n && s->tops[s->n - 1].at == m->at[0] &&
	    !(s->tops[s->n - 1].json = strndup((const char *)data, size)))
		s->oom = true;
	return 0;
}

static void scan_free(struct scan *s)
{
	for (size_t i = 0; i < s->n; i++) {
		for (size_t k = 0; k < s->tops[i].n; k++)
			free(s->tops[i].ents[k]);
		free(s->tops[i].ents);
		free(s->tops[i].raw);
		free(s->tops[i].name);
		free(s->tops[i].json);
	}
	free(s->tops);
}

static struct top *find_top(const struct scan *s, const char *name)
{
	name = norm(name);
	for (size_t i = 0; i < s->n; i++)
		if (!strcmp(s->tops[i].name, name))
			return &s->tops[i];
	return NULL;
}

/* The blob of a digest ("sha256:HEX"): blobs/sha256/HEX. */
static struct top *find_blob(const struct scan *s, const char *digest)
{
	char name[256];
	const char *colon = digest ? strchr(digest, ':') : NULL;

	if (!colon || strchr(colon, '/'))
		return NULL;
	snprintf(name, sizeof(name), "blobs/%.*s/%s", (int)(colon - digest), digest, colon + 1);
	return find_top(s, name);
}

static struct jt *top_json(const struct top *t)
{
	return t && t->json ? jt_parse(t->json) : NULL;
}

/* ---- the images, applied ---- */

struct resolve {
	const struct scan *s;
	const char *platform;
	struct image_view *v;
	bool oom;
};

/* "sha256:" and 12 hex digits of a blob's name or digest ("X/layer.tar": X's). */
static void short_id(char *buf, size_t size, const char *s)
{
	const char *slash = strrchr(s, '/'), *base = slash ? slash + 1 : s;

	if (slash && !strcmp(base, "layer.tar")) {
		const char *up = slash;

		while (up > s && up[-1] != '/')
			up--;
		snprintf(buf, size, "%.*s", (int)(slash - up < 12 ? slash - up : 12), up);
		return;
	}
	if (!strncmp(base, "sha256:", 7))
		base += 7;
	snprintf(buf, size, "sha256:%.12s", base);
}

static bool is_whiteout(const char *e)
{
	const char *slash = strrchr(e, '/');

	return !strncmp(slash ? slash + 1 : e, ".wh.", 4);
}

/*
 * Whether a lower layer's entry e is hidden by the layers above: replaced
 * (seen), deleted (itself or a directory above it whited out), or below a
 * directory they made opaque.
 */
static bool hidden(struct strset *seen, struct strset *gone, struct strset *opaque, const char *e)
{
	char buf[4096];

	if (set_has(seen, e) || set_has(gone, e) || set_has(opaque, ""))
		return true;
	snprintf(buf, sizeof(buf), "%s", e);
	for (char *p = buf; (p = strchr(p, '/')); *p++ = '/') {
		*p = '\0';
		if (set_has(gone, buf) || set_has(opaque, buf))
			return true;
	}
	return false;
}

/* A layer's whiteouts, applied to the layers below it. */
static bool add_whiteouts(struct strset *gone, struct strset *opaque, const struct top *t)
{
	char buf[4096];

	for (size_t k = 0; k < t->n; k++) {
		const char *e = t->ents[k], *slash = strrchr(e, '/');
		const char *base = slash ? slash + 1 : e;
		int dir = slash ? (int)(slash - e) : 0;

		if (!is_whiteout(e))
			continue;
		if (!strcmp(base, ".wh..wh..opq")) {
			snprintf(buf, sizeof(buf), "%.*s", dir, e);
			if (!set_add(opaque, buf))
				return false;
			continue;
		}
		snprintf(buf, sizeof(buf), "%.*s%s%s", dir, e, slash ? "/" : "", base + 4);
		if (!set_add(gone, buf))
			return false;
	}
	return true;
}

/* The layer t as applied by the image label (the first to apply it names it). */
static bool add_layer(struct image_view *v, const struct top *t, const char *label)
{
	struct image_layer *l;
	char id[64];
	size_t cap = v->nlayers;

	for (size_t i = 0; i < v->nlayers; i++)
		if (v->layers[i].at == t->at)
			return true;
	if (!push((void **)&v->layers, &v->nlayers, &cap, sizeof(*l)))
		return false;
	l = &v->layers[v->nlayers];
	short_id(id, sizeof(id), t->name);
	*l = (struct image_layer){ .at = t->at, .member = strdup(t->raw) };
	if (!l->member || asprintf(&l->label, "%s!%s", label, id) < 0) {
		free(l->member);
		return false;
	}
	v->nlayers++;
	return true;
}

/* One layer's entries the layers above leave visible, into v's set. */
static bool show_layer(struct image_view *v, struct strset *seen, struct strset *gone,
		       struct strset *opaque, const struct top *t)
{
	char key[4200];

	for (size_t k = 0; k < t->n; k++) {
		if (is_whiteout(t->ents[k]) || hidden(seen, gone, opaque, t->ents[k]))
			continue;
		snprintf(key, sizeof(key), "%u\t%s", t->at, t->ents[k]);
		if (!set_add(v->visible, key))
			return false;
	}
	for (size_t k = 0; k < t->n; k++)
		if (!is_whiteout(t->ents[k]) && !set_add(seen, t->ents[k]))
			return false;
	return add_whiteouts(gone, opaque, t);
}

/* Apply an image's layers (bottom first), top down: what each shows is visible. */
static void apply_image(struct resolve *r, const char *label, struct top **layers, size_t n)
{
	struct strset seen, gone, opaque;
	size_t total = 1;
	bool ok;

	for (size_t i = 0; i < n; i++)
		total += layers[i]->n;
	ok = set_init(&seen, total);
	ok = set_init(&gone, total) && ok;
	ok = set_init(&opaque, total) && ok;
	for (size_t i = n; ok && i-- > 0;)
		ok = show_layer(r->v, &seen, &gone, &opaque, layers[i]) &&
		     add_layer(r->v, layers[i], label);
	if (!ok)
		r->oom = true;
	set_free(&seen);
	set_free(&gone);
	set_free(&opaque);
}

static bool platform_ok(const char *want, const struct jt *p)
{
	const char *os = jt_str(p, "os"), *arch = jt_str(p, "architecture");
	const char *variant = jt_str(p, "variant");
	char have[256];

	if (!want || !os || !arch)
		return true; /* none asked for, or the image does not say: taken */
	snprintf(have, sizeof(have), "%s/%s", os, arch);
	if (!strcmp(want, have))
		return true;
	snprintf(have, sizeof(have), "%s/%s/%s", os, arch, variant ? variant : "");
	return variant && !strcmp(want, have);
}

/*
 * The tops of the layers named (by digest, or by file name), bottom first,
 * into tops[]; how many. One not in the tar is passed over: docker save
 * writes a layer an image has twice as a symbolic link to the first (no
 * regular file), and applying it again would change nothing.
 */
static size_t find_layers(const struct resolve *r, const struct jt *list, bool digests,
			  struct top **tops)
{
	size_t n = 0;

	for (size_t i = 0; i < list->n; i++) {
		const struct jt *l = &list->kids[i];

		tops[n] = digests		 ? find_blob(r->s, jt_str(l, "digest"))
			  : l->type == JT_STRING ? find_top(r->s, l->str)
						 : NULL;
		n += tops[n] != NULL;
	}
	return n;
}

/* One image: its platform checked against --platform (config: its config's JSON), applied. */
static void take_image(struct resolve *r, const struct jt *platform, const struct top *config,
		       const struct jt *layers, bool digests, const char *label)
{
	struct jt *c = platform ? NULL : top_json(config);
	struct top **tops;

	if (!platform_ok(r->platform, platform ? platform : c) || !layers ||
	    layers->type != JT_ARRAY) {
		jt_free(c);
		return;
	}
	jt_free(c);
	if (!(tops = calloc(layers->n + 1, sizeof(*tops)))) {
		r->oom = true;
		return;
	}
	apply_image(r, label, tops, find_layers(r, layers, digests, tops));
	free(tops);
}

/*
 * An image's name in messages: its reference, else its digest shortened;
 * of an index of several, with its platform ("app:1[linux/arm64]").
 */
static void oci_label(char *label, size_t size, const char *name, const char *digest,
		      const struct jt *platform, bool several)
{
	const char *os = jt_str(platform, "os"), *arch = jt_str(platform, "architecture");
	char id[64];

	short_id(id, sizeof(id), digest ? digest : "");
	if (several && os && arch)
		snprintf(label, size, "%s[%s/%s]", name ? name : id, os, arch);
	else
		snprintf(label, size, "%s", name ? name : id);
}

/* An OCI index's manifests (an index in it followed), each an image. */
static void oci_index(struct resolve *r, const struct jt *index, const char *ref, int depth)
{
	const struct jt *list = jt_get(index, "manifests");

	for (size_t i = 0; list && list->type == JT_ARRAY && i < list->n; i++) {
		const struct jt *d = &list->kids[i], *a = jt_get(d, "annotations");
		const char *digest = jt_str(d, "digest");
		const char *name = jt_str(a, "io.containerd.image.name");
		struct jt *m = top_json(find_blob(r->s, digest));
		char label[512];

		name = name ? name : jt_str(a, "org.opencontainers.image.ref.name");
		name = name ? name : ref;
		if (m && jt_get(m, "manifests") && depth < INDEX_DEPTH) {
			oci_index(r, m, name, depth + 1);
		} else if (m) {
			oci_label(label, sizeof(label), name, digest, jt_get(d, "platform"),
				  list->n > 1);
			take_image(r, jt_get(d, "platform"),
				   find_blob(r->s, jt_str(jt_get(m, "config"), "digest")),
				   jt_get(m, "layers"), true, label);
		}
		jt_free(m);
	}
}

/* docker save's manifest.json: a list of images, each its config, tags and layer files. */
static void docker_manifest(struct resolve *r, const struct jt *list)
{
	for (size_t i = 0; list->type == JT_ARRAY && i < list->n; i++) {
		const struct jt *m = &list->kids[i], *tags = jt_get(m, "RepoTags");
		const char *config = jt_str(m, "Config");
		char label[512];

		if (!config)
			continue;
		if (tags && tags->type == JT_ARRAY && tags->n && tags->kids[0].type == JT_STRING)
			snprintf(label, sizeof(label), "%s", tags->kids[0].str);
		else
			short_id(label, sizeof(label), config);
		take_image(r, NULL, find_top(r->s, config), jt_get(m, "Layers"), false, label);
	}
}

/* The images of the scan: an OCI layout's index, else docker save's manifest. 1: none. */
static int resolve(struct resolve *r)
{
	const struct top *index = find_top(r->s, "index.json");
	struct jt *j = NULL;
	size_t total = 1;

	/* An OCI layout first: docker 25 writes both, and its index has the platforms. */
	if (!index || !find_top(r->s, "oci-layout") || !(j = top_json(index)))
		j = top_json(find_top(r->s, "manifest.json"));
	if (!j)
		return 1;
	for (size_t i = 0; i < r->s->n; i++)
		total += r->s->tops[i].n;
	if (!(r->v->visible = malloc(sizeof(*r->v->visible))) || !set_init(r->v->visible, total)) {
		free(r->v->visible);
		r->v->visible = NULL;
		jt_free(j);
		return -ENOMEM;
	}
	if (jt_get(j, "manifests"))
		oci_index(r, j, NULL, 0);
	else
		docker_manifest(r, j);
	jt_free(j);
	return r->oom ? -ENOMEM : 0;
}

/* ---- what the identify walk sees ---- */

/* Whether a tar member's name is one an image's first file has. */
static bool image_name(const char *name)
{
	static const char *const firsts[] = { "blobs/", "index.json", "oci-layout", "manifest.json",
					      "repositories" };
	size_t hex;

	name = norm(name);
	for (size_t i = 0; i < sizeof(firsts) / sizeof(*firsts); i++)
		if (!strncmp(name, firsts[i], strlen(firsts[i])))
			return true;
	hex = strspn(name, "0123456789abcdef");
	return hex == 64 && (name[64] == '/' || name[64] == '.'); /* docker save's ID/ or ID.json */
}

bool image_candidate(int fd)
{
	unsigned char h[512];
	char name[101];
	off_t at = 0;

	/*
	 * An uncompressed tar (as docker save and oci-archive write), its first
	 * file image-like: headers read past directories ("./", "blobs/"),
	 * a few, so that another tar is never walked twice for nothing.
	 */
	for (int i = 0; i < 8; i++, at += 512) {
		if (pread(fd, h, sizeof(h), at) != (ssize_t)sizeof(h) ||
		    memcmp(h + 257, "ustar", 5))
			return false;
		memcpy(name, h, 100);
		name[100] = '\0';
		if (image_name(name))
			return true;
		if (h[156] != '5')
			return false; /* a file, of another tar */
		/* a directory ("./"): no data follows, the next header says more */
	}
	return false;
}

int image_view_read(struct image_view *v, int fd, const char *path,
		    const struct lidia_archive_opts *limits, const char *platform)
{
	struct scan s = { 0 };
	struct resolve r = { .s = &s, .platform = platform, .v = v };
	struct lidia_archive_opts ao = *limits;
	int err;

	*v = (struct image_view){ 0 };
	ao.elf = NULL;
	ao.elf_member = NULL;
	ao.want = NULL;
	ao.want_member = scan_want;
	ao.other_member = scan_other;
	ao.other_max = JSON_MAX;
	ao.other_entry = scan_entry;
	ao.problem = NULL; /* said by the identify walk, which meets them again */
	ao.ctx = &s;
	err = lidia_archive_walk_fd(fd, path, &ao, NULL);
	if (s.oom)
		err = -ENOMEM;
	else if (err)
		err = 1;
	else
		err = resolve(&r);
	scan_free(&s);
	if (err)
		image_view_release(v);
	return err;
}

void image_view_release(struct image_view *v)
{
	for (size_t i = 0; i < v->nlayers; i++) {
		free(v->layers[i].member);
		free(v->layers[i].label);
	}
	free(v->layers);
	if (v->visible) {
		set_free(v->visible);
		free(v->visible);
	}
	*v = (struct image_view){ 0 };
}

static const struct image_layer *layer_at(const struct image_view *v, uint32_t at)
{
	for (size_t i = 0; i < v->nlayers; i++)
		if (v->layers[i].at == at)
			return &v->layers[i];
	return NULL;
}

bool image_view_wants(struct image_view *v, const struct lidia_archive_member *m)
{
	char key[4200];

	if (m->depth == 1)
		return layer_at(v, m->at[0]) != NULL;
	if (m->depth > 2)
		return true; /* inside a visible entry (an archive in a layer) */
	snprintf(key, sizeof(key), "%u\t%s", m->at[0], norm(m->name));
	return set_has(v->visible, key);
}

const char *image_view_name(const struct image_view *v, const char *input, const char *shown,
			    const struct lidia_archive_member *m, char *buf, size_t size)
{
	const struct image_layer *l = m->depth >= 2 ? layer_at(v, m->at[0]) : NULL;
	size_t in = strlen(input), ln;

	if (!l)
		return m->path;
	ln = strlen(l->member);
	if (strncmp(m->path, input, in) || m->path[in] != '!' ||
	    strncmp(m->path + in + 1, l->member, ln) || m->path[in + 1 + ln] != '!')
		return m->path;
	snprintf(buf, size, "%s@%s%s", shown, l->label, m->path + in + 1 + ln);
	return buf;
}
