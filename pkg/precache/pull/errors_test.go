package pull

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"syscall"
	"testing"

	"github.com/google/go-containerregistry/pkg/v1/remote/transport"

	"github.com/cgu-operator/cgu-operator/pkg/precache"
)

func TestIsRetryable(t *testing.T) {
	status := func(code int) error { return fmt.Errorf("fetching x: %w", &transport.Error{StatusCode: code}) }
	cases := map[string]struct {
		err  error
		want bool
	}{
		"nil":                  {err: nil},
		"404":                  {err: status(http.StatusNotFound)},
		"401":                  {err: status(http.StatusUnauthorized)},
		"403":                  {err: status(http.StatusForbidden)},
		"408":                  {err: status(http.StatusRequestTimeout), want: true},
		"429":                  {err: status(http.StatusTooManyRequests), want: true},
		"500":                  {err: status(http.StatusInternalServerError), want: true},
		"503":                  {err: status(http.StatusServiceUnavailable), want: true},
		"connection refused":   {err: fmt.Errorf("get: %w", &net.OpError{Op: "dial", Err: syscall.ECONNREFUSED}), want: true},
		"no such host":         {err: &net.DNSError{Err: "no such host", Name: "quay.io"}, want: true},
		"deadline":             {err: fmt.Errorf("x: %w", context.DeadlineExceeded), want: true},
		"cancelled":            {err: context.Canceled, want: true},
		"cut short":            {err: io.ErrUnexpectedEOF, want: true},
		"reset":                {err: syscall.ECONNRESET, want: true},
		"marked":               {err: fmt.Errorf("x: %w", MarkRetryable(errors.New("busy"))), want: true},
		"a package is missing": {err: errors.New(`the catalog has no package "x"`)},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			if got := IsRetryable(tc.err); got != tc.want {
				t.Errorf("IsRetryable(%v) = %t, want %t", tc.err, got, tc.want)
			}
		})
	}
	if MarkRetryable(nil) != nil {
		t.Error("MarkRetryable(nil) is not nil")
	}
}

func TestFailureAndExitCode(t *testing.T) {
	long := strings.Repeat("é", maxErrorLen)
	s := Failure(precache.Summary{Run: "r", Pulled: 2}, fmt.Errorf("line one\nline two: %w", MarkRetryable(errors.New(long))))
	if s.Phase != precache.PhaseFailed || !s.Retryable || s.Pulled != 2 || ExitCode(s) != precache.ExitRetryable {
		t.Errorf("Failure() = %+v, want Failed and retryable, keeping the counts", s)
	}
	if len(s.Error) > maxErrorLen || !strings.HasPrefix(s.Error, "line one line two: éé") || !strings.HasSuffix(s.Error, "é...") {
		t.Errorf("error = %q (%d bytes), want one line of at most %d bytes, cut on a character", s.Error, len(s.Error), maxErrorLen)
	}
	if code := ExitCode(Failure(precache.Summary{}, errors.New("no such image"))); code != precache.ExitUnrecoverable {
		t.Errorf("ExitCode() of an unrecoverable failure = %d, want %d", code, precache.ExitUnrecoverable)
	}
	if code := ExitCode(precache.Summary{Phase: precache.PhaseSucceeded}); code != precache.ExitOK {
		t.Errorf("ExitCode() of a success = %d, want %d", code, precache.ExitOK)
	}
}

func TestFormatBytes(t *testing.T) {
	cases := map[int64]string{0: "0B", 1023: "1023B", 1024: "1.0KiB", 1536: "1.5KiB", 30 << 30: "30.0GiB", 5 << 40: "5.0TiB", -2048: "-2.0KiB"}
	for n, want := range cases {
		if got := FormatBytes(n); got != want {
			t.Errorf("FormatBytes(%d) = %q, want %q", n, got, want)
		}
	}
}
