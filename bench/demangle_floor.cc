// SPDX-License-Identifier: Apache-2.0
// bench/demangle_floor NAMES PASSES: LLVM 16's demangler alone, the one
// lidiagen links (llvm::itaniumDemangle, into one buffer grown as needed,
// as lib/collect/demangle_llvm.cc calls it), over every name of the file
// NAMES (one a line), PASSES times. Prints the CPU seconds of one pass and
// the names demangled. speed_aims.sh puts that beside Pyroscope's writer:
// the least any run that demangles these names costs, whatever else it does.
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <string>
#include <vector>

#include <llvm/Demangle/Demangle.h>

static double cpu_seconds()
{
	struct timespec t;

	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t);
	return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

int main(int argc, char **argv)
{
	std::vector<std::string> names;
	size_t cap = 4096, done = 0;
	char *buf = static_cast<char *>(malloc(cap));
	char line[1 << 16];
	FILE *f;
	int passes;
	double t;

	if (argc != 3 || !(f = fopen(argv[1], "r")) || (passes = atoi(argv[2])) < 1 || !buf) {
		fprintf(stderr, "usage: demangle_floor NAMES PASSES\n");
		return 2;
	}
	while (fgets(line, sizeof(line), f)) {
		line[strcspn(line, "\n")] = '\0';
		names.emplace_back(line);
	}
	fclose(f);
	t = cpu_seconds();
	for (int p = 0; p < passes; p++) {
		for (const std::string &name : names) {
			size_t n = cap;
			char *out = llvm::itaniumDemangle(name.c_str(), buf, &n, nullptr);

			if (!out)
				continue;
			buf = out;
			cap = n > cap ? n : cap;
			done += p == 0;
		}
	}
	printf("%.4f %zu\n", (cpu_seconds() - t) / passes, done);
	free(buf);
	return 0;
}
