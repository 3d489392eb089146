/* SPDX-License-Identifier: Apache-2.0 */
#ifndef LIDIA_SPLIT_PATHS_H
#define LIDIA_SPLIT_PATHS_H

#include <stdbool.h>

#include <elfutils/libdw.h>

/*
 * Identify: whether libdw may look for the split units (.dwo files) of dw.
 *
 * Each skeleton unit names its file (DW_AT_dwo_name, relative to
 * DW_AT_comp_dir), and libdw opens the paths these make, blocking and
 * without asking what they are, as soon as it is asked for a split unit:
 * a FIFO there hangs the run, a device is read. An input names these
 * paths, so they are looked at first: true when each is absent or a
 * regular file, false (one warning naming image and the path) when one is
 * a FIFO, device, socket or unreadable. Only the skeletons are read
 * (dwarf_get_units without a split DIE), which opens nothing.
 *
 * debugdir: the directory libdw tries first, that of the file dw was begun
 * from by descriptor (dwp_unpack.c's), or NULL for a Dwarf begun from
 * memory, which tries absolute paths only.
 */
bool split_paths_safe(Dwarf *dw, const char *image, const char *debugdir);

#endif
