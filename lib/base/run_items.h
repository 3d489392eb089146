/* SPDX-License-Identifier: Apache-2.0 */
#ifndef LIDIA_RUN_ITEMS_H
#define LIDIA_RUN_ITEMS_H

#include <stddef.h>

/* The slot of run_items()'s last round: the calling thread alone, after the others. */
#define RUN_ITEMS_MAX 64

/*
 * Items 0..n-1 run on up to threads threads (the calling one among them;
 * fewer when threads cannot be started): each calls run(ctx, slot, k) for
 * the next item not yet taken, slot being the thread's (0: the calling
 * one), until none is left. With guard (lidia_extract_opts.thread_guard),
 * each thread's share runs through it, the calling thread's too while
 * others run; an item a guard cut short is run again once the others are
 * done, on the calling thread, with slot RUN_ITEMS_MAX (a slot whose state
 * was cut short may be half way through anything). -ENOMEM, with nothing
 * run, when there is no memory to keep count.
 */
int run_items(size_t n, unsigned threads, int (*guard)(void (*fn)(void *), void *),
	      void (*run)(void *ctx, unsigned slot, size_t k), void *ctx);

#endif
