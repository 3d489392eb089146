/* SPDX-License-Identifier: Apache-2.0 */
/*
 * libexpat, loaded with libcurl when a bucket is first opened (as
 * curl_load.h): S3's answers are XML, and a listing or an error document is
 * believed only once a real XML parser has read it whole (s3_xml.c).
 * <expat.h> gives the types; the functions are called through s3_expat
 * only, once s3_expat_load has succeeded.
 */
#ifndef LIDIAGEN_EXPAT_LOAD_H
#define LIDIAGEN_EXPAT_LOAD_H

#include <expat.h>
#include <stddef.h>

/* Every expat function s3_xml.c calls: XML_NAME is s3_expat.NAME. */
#define S3_EXPAT_FNS(X)                                                                            \
	X(XML_Parser, ParserCreate, (const XML_Char *))                                            \
	X(void, ParserFree, (XML_Parser))                                                          \
	X(void, SetUserData, (XML_Parser, void *))                                                 \
	X(void, SetElementHandler, (XML_Parser, XML_StartElementHandler, XML_EndElementHandler))   \
	X(void, SetCharacterDataHandler, (XML_Parser, XML_CharacterDataHandler))                   \
	X(void, SetStartDoctypeDeclHandler, (XML_Parser, XML_StartDoctypeDeclHandler))             \
	X(enum XML_Status, Parse, (XML_Parser, const char *, int, int))                            \
	X(enum XML_Status, StopParser, (XML_Parser, XML_Bool))                                     \
	X(enum XML_Error, GetErrorCode, (XML_Parser))                                              \
	X(const XML_LChar *, ErrorString, (enum XML_Error))                                        \
	X(XML_Size, GetCurrentLineNumber, (XML_Parser))

struct s3_expat_fns {
#define X(ret, name, args) ret(*name) args;
	S3_EXPAT_FNS(X)
#undef X
};

/* Filled by s3_expat_load; not to be called before it succeeds. */
extern struct s3_expat_fns s3_expat;

/*
 * Load libexpat.so.1, once for the process. 0 when it is ready; else
 * -ELIBACC and one line in err (when err_size is not 0): "publishing
 * needs libexpat.so.1 (Debian: libexpat1)".
 */
int s3_expat_load(char *err, size_t err_size);

#endif
