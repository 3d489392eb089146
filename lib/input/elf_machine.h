/* SPDX-License-Identifier: Apache-2.0 */
#ifndef LIDIA_ELF_MACHINE_H
#define LIDIA_ELF_MACHINE_H

#include <gelf.h>
#include <stdbool.h>

/*
 * Whether lidiagen reads programs of h's architecture right: one of those
 * doc/architectures.md lists, each checked by tests/t_elf_corners.sh
 * against eu-addr2line and llvm-symbolizer. Others are refused
 * (LIDIA_E_ELF_MACHINE) rather than read into a wrong file: code addresses
 * that are not symbol values (function descriptors, ISA bits) differ by
 * architecture.
 */
bool elf_machine_supported(const GElf_Ehdr *h);

#endif
