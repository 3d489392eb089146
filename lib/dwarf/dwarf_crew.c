/* SPDX-License-Identifier: Apache-2.0 */
/* Extract: DWARF, the Dwarfs the threads of one extraction read through; see the header. */
#include "dwarf_begin.h"
#include "dwarf_crew.h"
#include "internal.h"

/* Chunks per thread: enough that the threads finish together, few enough to cost nothing. */
#define CHUNKS_PER_THREAD 16

/*
 * A Dwarf of the thread's own over the same images, made on the calling
 * thread (libelf is not to be entered by two at once); NULL when it cannot
 * read the units listed (a section libdw inflated in the image that it
 * cannot inflate again, say).
 */
static Dwarf *own_dwarf(const struct dw *w, Dwarf *alt, Dwarf **own_alt)
{
	Dwarf *mine;
	Dwarf_Die first, last;

	*own_alt = alt ? dwarf_begin_image(dwarf_getelf(alt), NULL) : NULL;
	if (alt && !*own_alt)
		return NULL;
	mine = dwarf_begin_image(dwarf_getelf(w->dw), *own_alt);
	if (!mine || !dwarf_offdie(mine, w->units[0].die_off, &first) ||
	    !dwarf_offdie(mine, w->units[w->nunits - 1].die_off, &last)) {
		dwarf_end_image(mine);
		if (*own_alt)
			dwarf_end(*own_alt);
		*own_alt = NULL;
		return NULL;
	}
	return mine;
}

void crew_open(struct crew *c, const struct dw *w, Dwarf *alt)
{
	size_t threads = w->x->threads < CREW_MAX ? w->x->threads : CREW_MAX;

	memset(c, 0, sizeof(*c));
	c->n = 1;
	if (threads <= 1 || w->split_units || w->nunits < 2 * threads)
		return;
	while (c->n < threads && (c->dw[c->n] = own_dwarf(w, alt, &c->alt[c->n])))
		c->n++;
}

void crew_start_runs(struct crew *c, Elf *elf, Dwarf *alt)
{
	for (size_t i = 1; i < c->n; i++) {
		dwarf_end_image(c->dw[i]);
		c->dw[i] = NULL;
	}
	c->runs = true;
	c->elf = elf;
	c->alt[0] = alt;
	pthread_mutex_init(&c->lock, NULL);
}

void crew_close(struct crew *c)
{
	for (size_t i = 1; i < c->n; i++) {
		dwarf_end_image(c->dw[i]);
		if (c->alt[i])
			dwarf_end(c->alt[i]);
	}
	if (c->runs)
		pthread_mutex_destroy(&c->lock);
	memset(c, 0, sizeof(*c));
}

size_t crew_chunks(const struct crew *c, size_t n)
{
	size_t want = c->n * CHUNKS_PER_THREAD;

	return want < n ? want : n;
}

Dwarf *crew_run_begin(struct crew *c, unsigned slot)
{
	Dwarf *dw;

	pthread_mutex_lock(&c->lock);
	dw = dwarf_begin_image(c->elf, c->alt[slot]);
	pthread_mutex_unlock(&c->lock);
	return dw;
}

void crew_run_end(struct crew *c, Dwarf *dw)
{
	pthread_mutex_lock(&c->lock);
	dwarf_end_image(dw);
	pthread_mutex_unlock(&c->lock);
}
