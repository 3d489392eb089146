/* SPDX-License-Identifier: Apache-2.0 */
#ifndef LIDIA_SYMBOLS_H
#define LIDIA_SYMBOLS_H

#include <stddef.h>
#include <stdint.h>

#include "elf_image.h"

/* Which table a symbol came from; a higher value wins an alias tie. */
enum sym_table { SYM_DYNSYM = 0, SYM_SYMTAB = 1 };

/* A function symbol; name points into the ELF image's string table. */
struct sym {
	uint64_t addr;
	uint64_t size;	  /* 0: unknown (an assembly label without .size) */
	uint64_t sec_end; /* end of its section: how far an unknown size may reach */
	const char *name;
	const char *file; /* a local symbol's STT_FILE, or NULL */
	uint32_t index;	  /* position in its table */
	uint8_t table;	  /* enum sym_table */
	uint8_t bind;
};

struct sym_vec {
	struct sym *v;
	size_t n, cap;
};

/*
 * Append every defined, named STT_FUNC and STT_GNU_IFUNC symbol of e's
 * .symtab and/or .dynsym to out, and STT_NOTYPE ones in code sections
 * (assembly without .type) but for local labels and mapping symbols. On
 * ppc64 ELFv1, symbols of function descriptors are moved to the code they
 * point to, read in the .opd of e or of the first of pair[npair] (the images
 * of one build) that has its bytes; those that cannot be read are left out.
 * bias is added to every address (a prelinked binary's debug file: elf_pair.h).
 */
int symbols_collect(struct sym_vec *out, const struct lidia_elf *e, uint64_t bias,
		    const struct lidia_elf *const *pair, size_t npair, bool symtab, bool dynsym);

/*
 * Sort syms and keep one symbol per start address: the aliases' winner
 * (largest size, then .symtab over .dynsym, then the later entry in its
 * table, as llvm-symbolizer picks, then the name). A symbol of unknown size
 * reaches to the next one or its section's end.
 */
void symbols_resolve(struct sym_vec *syms);

/* The innermost resolved symbol that covers addr, or NULL. */
const struct sym *symbols_find(const struct sym_vec *syms, uint64_t addr);

#endif
