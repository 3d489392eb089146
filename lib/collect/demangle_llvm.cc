// SPDX-License-Identifier: Apache-2.0
// Extract: the one C++ file, a C entry point into LLVM's demangler (libLLVMDemangle),
// so that names read exactly as llvm-symbolizer prints them (Itanium, Rust
// and D schemes; ">>" and "(.cold)" where GNU's demangler writes "> >" and
// "[clone .cold]").
#include <cstdlib>
#include <cstring>
#include <string>

#include <llvm/Demangle/Demangle.h>

extern "C" char *lidia_llvm_demangle(const char *name);

extern "C" char *lidia_llvm_demangle(const char *name)
{
	std::string out;

	if (!llvm::nonMicrosoftDemangle(name, out))
		return nullptr;
	return strdup(out.c_str());
}
