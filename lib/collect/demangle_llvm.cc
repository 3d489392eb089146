// SPDX-License-Identifier: Apache-2.0
// Extract: the one C++ file, a C entry point into LLVM's demangler (libLLVMDemangle),
// so that names read exactly as llvm-symbolizer prints them (Itanium, Rust
// and D schemes; ">>" and "(.cold)" where GNU's demangler writes "> >" and
// "[clone .cold]").
#include <cstdlib>
#include <cstring>
#include <string>

#include <llvm/Demangle/Demangle.h>

extern "C" char *lidia_llvm_demangle(const char *name, char *buf, size_t *cap);

// name demangled into buf (malloc'd, *cap bytes at least; grown as needed),
// or nullptr when it does not demangle (buf is then left as it was).
// nonMicrosoftDemangle() would return a std::string made of a malloc'd
// copy: for "_Z" names, which it hands to itaniumDemangle() as they are,
// that is called with our buffer instead (three allocations fewer a name).
extern "C" char *lidia_llvm_demangle(const char *name, char *buf, size_t *cap)
{
	std::string out;
	size_t n = *cap;
	char *res;

	if (name[0] == '_' && name[1] == 'Z') {
		res = llvm::itaniumDemangle(name, buf, &n, nullptr);
		if (res && n > *cap)
			*cap = n; // n is what it wrote: the buffer holds at least that
		return res;
	}
	if (!llvm::nonMicrosoftDemangle(name, out))
		return nullptr;
	n = out.size() + 1;
	if (n > *cap) {
		res = static_cast<char *>(realloc(buf, n));
		if (!res)
			return nullptr;
		buf = res;
		*cap = n;
	}
	memcpy(buf, out.c_str(), n);
	return buf;
}
