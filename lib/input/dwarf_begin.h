/* SPDX-License-Identifier: Apache-2.0 */
#ifndef LIDIA_DWARF_BEGIN_H
#define LIDIA_DWARF_BEGIN_H

#include <elfutils/libdw.h>
#include <libelf.h>

/*
 * Identify: a Dwarf over elf, that never opens a file the input names.
 *
 * An image dwz made names its supplementary file (.gnu_debugaltlink), and
 * libdw, the first time it meets a reference into that file and none was
 * given it, opens the path named there itself, blocking and without asking
 * what it is: a FIFO hangs the run, a device is read, --no-debug-search is
 * not heeded. So every Dwarf is begun here: with alt (the dwz file lidiagen
 * found and checked) when there is one, else, when elf names a dwz file,
 * with a stand-in that holds nothing, so that references into it are
 * unreadable (their names lost, as with no dwz file) and libdw looks for
 * nothing. dwarf_end_image() ends the Dwarf and its stand-in, not alt.
 */
Dwarf *dwarf_begin_image(Elf *elf, Dwarf *alt);
void dwarf_end_image(Dwarf *dw);

#endif
