/* SPDX-License-Identifier: Apache-2.0 */
/* Write: string interning for the lidia strings table, one copy of each string. */
#include "internal.h"
#include "strtab.h"

static uint32_t hash_bytes(const char *s, size_t len)
{
	uint64_t h = 0x9e3779b97f4a7c15ull ^ len;

	while (len >= 8) {
		uint64_t v;

		memcpy(&v, s, 8);
		h = (h ^ v) * 0xff51afd7ed558ccdull;
		h ^= h >> 32;
		s += 8;
		len -= 8;
	}
	if (len) {
		uint64_t v = 0;

		memcpy(&v, s, len);
		h = (h ^ v) * 0xc4ceb9fe1a85ec53ull;
	}
	h ^= h >> 29;
	h *= 0xff51afd7ed558ccdull;
	h ^= h >> 32;
	return (uint32_t)h;
}

static int pool_append(struct strtab *t, const char *s, uint32_t len)
{
	int err = LIDIA_GROW(t->pool, t->len + 4 + (size_t)len, t->cap);

	if (err)
		return err;
	put_le32(t->pool + t->len, len);
	if (len)
		memcpy(t->pool + t->len + 4, s, len);
	t->len += 4 + (size_t)len;
	return 0;
}

static int rehash(struct strtab *t, size_t nslots)
{
	struct strtab_slot *slots = calloc(nslots, sizeof(*slots));

	if (!slots)
		return -ENOMEM;
	for (size_t i = 0; i < t->nslots; i++) {
		size_t j;

		if (!t->slots[i].off1)
			continue;
		for (j = t->slots[i].hash & (nslots - 1); slots[j].off1; j = (j + 1) & (nslots - 1))
			;
		slots[j] = t->slots[i];
	}
	free(t->slots);
	t->slots = slots;
	t->nslots = nslots;
	return 0;
}

int strtab_reserve(struct strtab *t, size_t n, size_t strings)
{
	size_t nslots = t->nslots;
	void *p;

	/* Slots for them all at once: doubling on the way rehashed each string again. */
	while (nslots && (t->count + strings) * 2 > nslots)
		nslots *= 2;
	if (nslots > t->nslots) {
		int err = rehash(t, nslots);

		if (err)
			return err;
	}
	p = t->pool;
	if (lidia_reserve(&p, &t->cap, t->len + n, 1))
		return -ENOMEM;
	t->pool = p;
	return 0;
}

int strtab_init(struct strtab *t)
{
	int err;

	memset(t, 0, sizeof(*t));
	err = rehash(t, 1024);
	if (!err)
		err = pool_append(t, NULL, 0);
	if (!err) {
		uint64_t off;

		/* Interned like any other string, so it is never stored twice. */
		err = strtab_intern(t, "[overflow]", 10, &off);
	}
	if (err)
		strtab_release(t);
	return err;
}

void strtab_release(struct strtab *t)
{
	free(t->pool);
	free(t->slots);
	memset(t, 0, sizeof(*t));
}

int strtab_intern(struct strtab *t, const char *s, size_t len, uint64_t *off)
{
	uint32_t h;
	size_t j;
	int err;

	if (len == 0) {
		*off = 0;
		return 0;
	}
	if (len > UINT32_MAX) {
		*off = STRTAB_OVERFLOW;
		return 0;
	}
	h = hash_bytes(s, len);
	for (j = h & (t->nslots - 1); t->slots[j].off1; j = (j + 1) & (t->nslots - 1)) {
		const unsigned char *p = t->pool + t->slots[j].off1 - 1;

		if (t->slots[j].hash == h && le32(p) == len && !memcmp(p + 4, s, len)) {
			*off = t->slots[j].off1 - 1;
			return 0;
		}
	}
	/* Offsets are kept in 32 bits here; a strings table past 4 GiB is refused. */
	if (t->len + 4 + len >= UINT32_MAX)
		return LIDIA_E_TOO_BIG;
	err = pool_append(t, s, (uint32_t)len);
	if (err)
		return err;
	*off = t->len - 4 - len;
	t->slots[j] = (struct strtab_slot){ (uint32_t)*off + 1, h };
	t->count++;
	if (t->count * 2 > t->nslots)
		return rehash(t, t->nslots * 2);
	return 0;
}
