// gosymcheck: an independent oracle for lidiagen on a real Go binary. It
// reads the binary's pclntab with Go's own reader (debug/gosym, on the
// table debug/elf finds) and checks that `lidiagen lookup --json FILE`
// gives, for every function, its name as the depth-0 (last) frame at its
// entry and at its last byte, and, at PCs sampled every -step bytes, the
// function as the depth-0 frame and the pc-file/pc-line value (the
// innermost frame's) as the innermost frame's file and line.
//
//	go run gosymcheck.go [-step N] BINARY FILE.lidia LIDIAGEN
//
// Finding the table: the .gopclntab (or .data.rel.ro.gopclntab) section;
// else the runtime.pclntab..runtime.epclntab symbols; else (a PIE linked
// externally keeps the table inside .data.rel.ro with no section of its
// own, and Debian strips the symbols) a pclntab header in a read-only or
// relro section that a relocation or a data word points at (the module
// data's first field). For Go 1.18+ the header's runtime.text is taken from
// the header, or from the RELATIVE relocation that fills it in a PIE.
package main

import (
	"bufio"
	"bytes"
	"debug/elf"
	"debug/gosym"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"sort"
	"strings"
	"time"
)

func die(f string, a ...interface{}) {
	fmt.Fprintf(os.Stderr, "gosymcheck: "+f+"\n", a...)
	os.Exit(2)
}

// relative returns the RELATIVE relocations: place -> addend.
func relative(f *elf.File) map[uint64]uint64 {
	m := map[uint64]uint64{}
	for _, s := range f.Sections {
		if s.Type != elf.SHT_RELA || f.Class != elf.ELFCLASS64 {
			continue
		}
		d, err := s.Data()
		if err != nil {
			continue
		}
		for i := 0; i+24 <= len(d); i += 24 {
			off := f.ByteOrder.Uint64(d[i:])
			info := f.ByteOrder.Uint64(d[i+8:])
			add := f.ByteOrder.Uint64(d[i+16:])
			if elf.R_X86_64(info&0xffffffff) == elf.R_X86_64_RELATIVE ||
				elf.R_AARCH64(info&0xffffffff) == elf.R_AARCH64_RELATIVE && f.Machine == elf.EM_AARCH64 {
				m[off] = add
			}
		}
	}
	return m
}

func symbol(f *elf.File, name string) (uint64, bool) {
	syms, _ := f.Symbols()
	for _, s := range syms {
		if s.Name == name {
			return s.Value, true
		}
	}
	return 0, false
}

// table finds the pclntab: its bytes, its address, and how it was found.
func table(f *elf.File, rel map[uint64]uint64) ([]byte, uint64, string) {
	for _, name := range []string{".gopclntab", ".data.rel.ro.gopclntab"} {
		if s := f.Section(name); s != nil {
			d, err := s.Data()
			if err == nil {
				return d, s.Addr, "section " + name
			}
		}
	}
	if lo, ok := symbol(f, "runtime.pclntab"); ok {
		if hi, ok := symbol(f, "runtime.epclntab"); ok && hi > lo {
			for _, s := range f.Sections {
				if s.Addr <= lo && hi <= s.Addr+s.Size && s.Type == elf.SHT_PROGBITS {
					d, err := s.Data()
					if err == nil {
						return d[lo-s.Addr : hi-s.Addr], lo, "symbols runtime.pclntab..runtime.epclntab"
					}
				}
			}
		}
	}
	// Scan: a header (magic, two zero bytes, quantum, pointer size) that
	// something points at.
	ptr := 8
	if f.Class == elf.ELFCLASS32 {
		ptr = 4
	}
	pointed := map[uint64]bool{}
	for _, a := range rel {
		pointed[a] = true
	}
	for _, s := range f.Sections {
		if s.Flags&elf.SHF_WRITE == 0 || s.Type != elf.SHT_PROGBITS {
			continue
		}
		d, err := s.Data()
		if err != nil {
			continue
		}
		for i := 0; i+ptr <= len(d); i += ptr {
			if ptr == 8 {
				pointed[f.ByteOrder.Uint64(d[i:])] = true
			} else {
				pointed[uint64(f.ByteOrder.Uint32(d[i:]))] = true
			}
		}
	}
	for _, s := range f.Sections {
		if s.Flags&elf.SHF_ALLOC == 0 || s.Flags&elf.SHF_EXECINSTR != 0 || s.Type != elf.SHT_PROGBITS {
			continue
		}
		d, err := s.Data()
		if err != nil {
			continue
		}
		for i := 0; i+16 <= len(d); i += ptr {
			m := f.ByteOrder.Uint32(d[i:])
			if m != 0xfffffff1 && m != 0xfffffff0 && m != 0xfffffffa && m != 0xfffffffb {
				continue
			}
			if d[i+4] != 0 || d[i+5] != 0 || d[i+7] != byte(ptr) || !pointed[s.Addr+uint64(i)] {
				continue
			}
			return d[i:], s.Addr + uint64(i), fmt.Sprintf("header found in %s at 0x%x", s.Name, s.Addr+uint64(i))
		}
	}
	return nil, 0, ""
}

type frame struct {
	Function string `json:"function"`
	File     string `json:"file"`
	Line     int    `json:"line"`
}

type answer struct {
	Address string  `json:"address"`
	Frames  []frame `json:"frames"`
}

// lookup runs lidiagen lookup --json once for all addresses.
func lookup(lidiagen, lidia string, addrs []uint64) (map[uint64][]frame, time.Duration) {
	var in bytes.Buffer
	for _, a := range addrs {
		fmt.Fprintf(&in, "%x\n", a)
	}
	cmd := exec.Command(lidiagen, "lookup", "--json", lidia)
	cmd.Stdin = &in
	cmd.Stderr = os.Stderr
	t0 := time.Now()
	out, err := cmd.Output()
	took := time.Since(t0)
	if err != nil {
		die("%s lookup --json %s: %v", lidiagen, lidia, err)
	}
	res := map[uint64][]frame{}
	sc := bufio.NewScanner(bytes.NewReader(out))
	sc.Buffer(make([]byte, 1<<20), 1<<26)
	i := 0
	for sc.Scan() {
		var a answer
		if err := json.Unmarshal(sc.Bytes(), &a); err != nil {
			die("bad lookup line %q: %v", sc.Text(), err)
		}
		res[addrs[i]] = a.Frames
		i++
	}
	if i != len(addrs) {
		die("lookup answered %d of %d addresses", i, len(addrs))
	}
	return res, took
}

func main() {
	step := flag.Uint64("step", 97, "sample a PC every `N` bytes of every function for the line check")
	flag.Parse()
	if flag.NArg() != 3 {
		die("usage: gosymcheck [-step N] BINARY FILE.lidia LIDIAGEN")
	}
	bin, lidia, lidiagen := flag.Arg(0), flag.Arg(1), flag.Arg(2)
	f, err := elf.Open(bin)
	if err != nil {
		die("%v", err)
	}
	rel := relative(f)
	data, va, how := table(f, rel)
	if data == nil {
		fmt.Println("pclntab: not found (no section, no symbols, no header pointed at): nothing to compare")
		os.Exit(1)
	}
	ptr := uint64(8)
	if f.Class == elf.ELFCLASS32 {
		ptr = 4
	}
	magic := f.ByteOrder.Uint32(data)
	text := uint64(0)
	textHow := ""
	if magic == 0xfffffff0 || magic == 0xfffffff1 {
		place := va + 8 + 2*ptr
		if ptr == 8 {
			text = f.ByteOrder.Uint64(data[8+2*ptr:])
		} else {
			text = uint64(f.ByteOrder.Uint32(data[8+2*ptr:]))
		}
		textHow = "pcHeader.textStart"
		if a, ok := rel[place]; ok {
			text, textHow = a, "the RELATIVE relocation of pcHeader.textStart"
		}
	} else if s := f.Section(".text"); s != nil {
		text, textHow = s.Addr, ".text"
	}
	lt := gosym.NewLineTable(data, text)
	tab, err := gosym.NewTable(nil, lt)
	if err != nil {
		die("debug/gosym: %v", err)
	}
	funcs := tab.Funcs
	fmt.Printf("pclntab: magic 0x%x, %s, %d bytes from 0x%x; runtime.text 0x%x from %s; %d functions\n",
		magic, how, len(data), va, text, textHow, len(funcs))
	if len(funcs) == 0 {
		os.Exit(1)
	}

	// 1. Every function: entry and last byte.
	var addrs []uint64
	for _, fn := range funcs {
		addrs = append(addrs, fn.Entry)
		if fn.End > fn.Entry+1 {
			addrs = append(addrs, fn.End-1)
		}
	}
	// 2. Sampled PCs.
	var samples []uint64
	for _, fn := range funcs {
		for pc := fn.Entry; pc < fn.End; pc += *step {
			samples = append(samples, pc)
		}
	}
	all := append(append([]uint64(nil), addrs...), samples...)
	sort.Slice(all, func(i, j int) bool { return all[i] < all[j] })
	res, took := lookup(lidiagen, lidia, all)

	outer := func(a uint64) string {
		fr := res[a]
		if len(fr) == 0 {
			return "(none)"
		}
		return fr[len(fr)-1].Function
	}
	var badEntry, badEnd []string
	nEnd := 0
	for _, fn := range funcs {
		if got := outer(fn.Entry); got != fn.Name {
			badEntry = append(badEntry, fmt.Sprintf("0x%x %s: lidiagen %s", fn.Entry, fn.Name, got))
		}
		if fn.End > fn.Entry+1 {
			nEnd++
			if got := outer(fn.End - 1); got != fn.Name {
				badEnd = append(badEnd, fmt.Sprintf("0x%x %s: last byte 0x%x: lidiagen %s", fn.Entry, fn.Name, fn.End-1, got))
			}
		}
	}
	fmt.Printf("functions at entry: %d, %d agree (%.3f%%)\n", len(funcs), len(funcs)-len(badEntry),
		100*float64(len(funcs)-len(badEntry))/float64(len(funcs)))
	for i, b := range badEntry {
		if i == 20 {
			fmt.Printf("  ... %d more\n", len(badEntry)-20)
			break
		}
		fmt.Println("  " + b)
	}
	fmt.Printf("functions at last byte: %d, %d agree\n", nEnd, nEnd-len(badEnd))
	for i, b := range badEnd {
		if i == 20 {
			fmt.Printf("  ... %d more\n", len(badEnd)-20)
			break
		}
		fmt.Println("  " + b)
	}

	var badLine []string
	nolines, inlined := 0, 0
	for _, pc := range samples {
		file, line, fn := tab.PCToLine(pc)
		fr := res[pc]
		if len(fr) > 1 {
			inlined++
		}
		want := "(none)"
		if fn != nil {
			want = fn.Name
		}
		good := len(fr) > 0 && fr[len(fr)-1].Function == want
		if file == "" || line == 0 {
			nolines++
			good = good && fr[0].Line == 0
		} else {
			good = good && fr[0].File == file && fr[0].Line == line
		}
		if !good {
			got := "(none)"
			if len(fr) > 0 {
				parts := []string{}
				for _, x := range fr {
					parts = append(parts, fmt.Sprintf("%s @ %s:%d", x.Function, x.File, x.Line))
				}
				got = strings.Join(parts, " <- ")
			}
			badLine = append(badLine, fmt.Sprintf("0x%x: gosym %s @ %s:%d; lidiagen %s", pc, want, file, line, got))
		}
	}
	fmt.Printf("lines at every %d bytes: %d PCs (%d in inlined code, %d with no line), %d agree (%.3f%%)\n",
		*step, len(samples), inlined, nolines, len(samples)-len(badLine),
		100*float64(len(samples)-len(badLine))/float64(len(samples)))
	for i, b := range badLine {
		if i == 20 {
			fmt.Printf("  ... %d more\n", len(badLine)-20)
			break
		}
		fmt.Println("  " + b)
	}
	fmt.Printf("lookup: %d addresses in %.2f s\n", len(all), took.Seconds())
	if len(badEntry)+len(badEnd)+len(badLine) > 0 {
		os.Exit(1)
	}
}
