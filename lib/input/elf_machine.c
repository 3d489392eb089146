/* SPDX-License-Identifier: Apache-2.0 */
/* Identify: the architectures whose programs lidiagen reads (elf_machine.h). */
#include "elf_machine.h"

#ifndef EF_MIPS_ARCH_ASE_M16
#define EF_MIPS_ARCH_ASE_M16 0x04000000
#endif
#ifndef EF_MIPS_MICROMIPS
#define EF_MIPS_MICROMIPS 0x02000000
#endif

bool elf_machine_supported(const GElf_Ehdr *h)
{
	switch (h->e_machine) {
	case EM_X86_64:
	case EM_386:
	case EM_AARCH64:
	case EM_ARM: /* the Thumb bit is cleared from symbol values (symbols.c) */
	case EM_PPC:
	case EM_PPC64: /* ELFv1 descriptors are followed (opd.c) */
	case EM_RISCV:
		return true;
	case EM_S390: /* s390x; not the 31-bit s390 */
		return h->e_ident[EI_CLASS] == ELFCLASS64;
	case EM_MIPS: /* not MIPS16 or microMIPS code, whose symbols carry an ISA bit */
		return !(h->e_flags & (EF_MIPS_ARCH_ASE_M16 | EF_MIPS_MICROMIPS));
	default:
		return false;
	}
}
