package main

import (
	"bytes"
	"context"
	"io"
	"strings"
	"testing"
)

func TestParseBackupFlags(t *testing.T) {
	for name, tc := range map[string]struct {
		args []string
		err  string
	}{
		"defaults":            {args: []string{"--run", "backup-1"}},
		"no run":              {args: nil, err: "missing required flags: --run"},
		"a report half named": {args: []string{"--run", "r", "--report-namespace", "ns"}, err: "--report-namespace and --report-configmap go together"},
		"an unexpected word":  {args: []string{"--run", "r", "now"}, err: "unexpected arguments: now"},
		"an unknown flag":     {args: []string{"--run", "r", "--force"}, err: "flag provided but not defined: -force"},
		"every flag":          {args: []string{"--run", "r", "--root", "/", "--dir", "/var/x", "--report-namespace", "ns", "--report-configmap", "cm"}},
	} {
		o, err := parseBackupFlags(tc.args, io.Discard)
		switch {
		case tc.err == "" && err != nil:
			t.Errorf("%s: %v", name, err)
		case tc.err != "" && (err == nil || err.Error() != tc.err):
			t.Errorf("%s: error %v, want %q", name, err, tc.err)
		case tc.err == "" && name == "defaults" && (o.root != "/host" || o.dir != "/var/recovery"):
			t.Errorf("defaults %+v", o)
		}
	}
}

func TestRestoreWithoutABackup(t *testing.T) {
	var stdout, stderr bytes.Buffer
	code := run(context.Background(), []string{"restore", "--root", t.TempDir()}, &stdout, &stderr)
	if code != 1 || !strings.Contains(stderr.String(), "no complete backup in /var/recovery") ||
		!strings.Contains(stderr.String(), "run the restore again") {
		t.Fatalf("exit %d, stderr %q", code, stderr.String())
	}
}

func TestBackupUsage(t *testing.T) {
	var stdout, stderr bytes.Buffer
	if code := run(context.Background(), []string{"backup"}, &stdout, &stderr); code != 3 || !strings.Contains(stderr.String(), "--run") {
		t.Fatalf("exit %d, stderr %q", code, stderr.String())
	}
}
