/* SPDX-License-Identifier: Apache-2.0 */
/* Support: error messages, from the one list in lidia.h, and the library version. */
#include <string.h>

#include "lidia.h"

static const char *const messages[] = {
#define LIDIA_X_MSG(code, msg) [code - LIDIA_E_BASE_ - 1] = msg,
	LIDIA_ERRORS(LIDIA_X_MSG)
#undef LIDIA_X_MSG
};

const char *lidia_strerror(int err)
{
	if (err == 0)
		return "success";
	if (err > LIDIA_E_BASE_ && err < LIDIA_E_END_)
		return messages[err - LIDIA_E_BASE_ - 1];
	if (err < 0 && err > -4096)
		return strerror(-err);
	return "unknown error";
}

const char *lidia_version(void)
{
	return LIDIA_VERSION_STRING;
}
