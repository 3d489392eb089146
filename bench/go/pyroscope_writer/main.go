// pyroscope_writer: Pyroscope's own lidia writer as its symbolizer calls it
// (CRC, files and lines), for bench/speed_aims.sh to time lidiagen against.
// Built there against a checkout of github.com/grafana/pyroscope's lidia
// module (PYROSCOPE_SRC); nothing of that module is in this tree.
//
//	pyroscope_writer ELF OUT.lidia
package main

import (
	"fmt"
	"os"

	"github.com/grafana/pyroscope/lidia"
)

func main() {
	if len(os.Args) != 3 {
		fmt.Fprintln(os.Stderr, "usage: pyroscope_writer ELF OUT.lidia")
		os.Exit(2)
	}
	err := lidia.CreateLidia(os.Args[1], os.Args[2], lidia.WithCRC(), lidia.WithFiles(), lidia.WithLines())
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
}
