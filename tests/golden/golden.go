// Package golden compares what a test wrote with a file it keeps (testdata/<name>.golden),
// and rewrites the file instead when the tests run with -update: a change of output is then
// one command and a diff to read.
package golden

import (
	"errors"
	"flag"
	"fmt"
	"os"
	"path/filepath"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata instead of comparing with them")

// Updating reports whether the tests run with -update.
func Updating() bool { return *update }

// Check compares got with testdata/<name>.golden, or with -update writes got there. The error
// says what differs and how to rewrite the file.
func Check(name, got string) error {
	path := filepath.Join("testdata", name+".golden")
	if *update {
		return os.WriteFile(path, []byte(got), 0o600)
	}
	want, err := os.ReadFile(path)
	if errors.Is(err, os.ErrNotExist) {
		return fmt.Errorf("%s is missing: go test -run ... -update writes it", path)
	}
	if err != nil {
		return err
	}
	if got != string(want) {
		return fmt.Errorf("%s differs (go test -run ... -update rewrites it); got:\n%s", path, got)
	}
	return nil
}
