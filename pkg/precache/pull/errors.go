package pull

import (
	"context"
	"errors"
	"io"
	"net"
	"net/http"
	"strings"
	"syscall"

	"github.com/google/go-containerregistry/pkg/v1/remote/transport"

	"github.com/cgu-operator/cgu-operator/pkg/precache"
)

// maxErrorLen bounds the error a Summary carries, so that the summary fits a termination
// message (4 KiB) with its list of failed images.
const maxErrorLen = 1024

// retryableError marks an error that may pass on another attempt.
type retryableError struct {
	err error
}

func (e *retryableError) Error() string { return e.err.Error() }

func (e *retryableError) Unwrap() error { return e.err }

// MarkRetryable marks err as one that may pass on another attempt, for stores and sources
// whose errors IsRetryable cannot tell by their type. It returns nil for nil.
func MarkRetryable(err error) error {
	if err == nil {
		return nil
	}
	return &retryableError{err: err}
}

// IsRetryable tells whether err may pass on another attempt: it was marked so, the
// registry answered 408, 429 or a 5xx status, the connection failed or timed out, or the
// run was cancelled. Every other error is unrecoverable: an image, package or channel that
// does not exist, a refused authorization, a spec that cannot be carried out.
func IsRetryable(err error) bool {
	if err == nil {
		return false
	}
	var marked *retryableError
	if errors.As(err, &marked) {
		return true
	}
	var terr *transport.Error
	if errors.As(err, &terr) {
		return retryableStatus(terr.StatusCode)
	}
	return isNetworkError(err)
}

// retryableStatus tells whether a registry's HTTP status may change on another attempt.
func retryableStatus(code int) bool {
	return code == http.StatusRequestTimeout || code == http.StatusTooManyRequests || code >= 500
}

// isNetworkError tells whether err is a failure to reach the registry or to read its whole
// answer, or the end of the run's context.
func isNetworkError(err error) bool {
	var opErr *net.OpError
	var dnsErr *net.DNSError
	var netErr net.Error
	switch {
	case errors.As(err, &opErr), errors.As(err, &dnsErr):
		return true
	case errors.As(err, &netErr) && netErr.Timeout():
		return true
	}
	for _, target := range []error{
		context.DeadlineExceeded, context.Canceled, io.ErrUnexpectedEOF,
		syscall.ECONNREFUSED, syscall.ECONNRESET, syscall.EPIPE,
	} {
		if errors.Is(err, target) {
			return true
		}
	}
	return false
}

// Failure is s ended by err: Failed, with err's message on one line and whether another run
// may succeed.
func Failure(s precache.Summary, err error) precache.Summary {
	s.Phase = precache.PhaseFailed
	s.Error = oneLine(err.Error(), maxErrorLen)
	s.Retryable = IsRetryable(err)
	return s
}

// ExitCode is the exit code of the precache program for its final summary: ExitOK when it
// succeeded, ExitRetryable when it failed for a reason that may pass, ExitUnrecoverable
// otherwise.
func ExitCode(s precache.Summary) int {
	switch {
	case s.Phase == precache.PhaseSucceeded:
		return precache.ExitOK
	case s.Retryable:
		return precache.ExitRetryable
	default:
		return precache.ExitUnrecoverable
	}
}

// oneLine is msg with its line breaks turned into spaces, cut to at most max bytes.
func oneLine(msg string, limit int) string {
	msg = strings.Join(strings.Fields(msg), " ")
	if len(msg) <= limit {
		return msg
	}
	const ellipsis = "..."
	cut := limit - len(ellipsis)
	for cut > 0 && !isRuneStart(msg[cut]) {
		cut--
	}
	return msg[:cut] + ellipsis
}

// isRuneStart tells whether b begins a UTF-8 sequence, so that cutting before it keeps the
// string valid.
func isRuneStart(b byte) bool {
	return b&0xC0 != 0x80
}
