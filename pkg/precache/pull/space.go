package pull

import (
	"fmt"
	"math"
	"syscall"
)

// CheckSpace checks, before pulling an estimated estimate bytes into store, that the store
// has at least required bytes free and, when gcThresholdPercent is above zero, that the pull
// leaves the store's filesystem used at most at that percentage: above the kubelet's image
// GC high threshold, the kubelet deletes unused images, and the precached ones are unused
// until the upgrade. Too little space is unrecoverable.
func CheckSpace(store Store, required, estimate int64, gcThresholdPercent int) error {
	free, err := store.FreeBytes()
	if err != nil {
		return fmt.Errorf("reading the image store's free space: %w", err)
	}
	if free < required {
		return fmt.Errorf("too little space in the image store: %s free, the spec requires %s", FormatBytes(free), FormatBytes(required))
	}
	if gcThresholdPercent <= 0 {
		return nil
	}
	total, err := store.TotalBytes()
	if err != nil {
		return fmt.Errorf("reading the image store's size: %w", err)
	}
	if total <= 0 {
		return nil
	}
	after := float64(total-free+estimate) / float64(total) * 100
	if after > float64(gcThresholdPercent) {
		return fmt.Errorf("too little space in the image store: pulling an estimated %s into its %s free of %s would fill it to %.0f%%, past the image GC high threshold of %d%%",
			FormatBytes(estimate), FormatBytes(free), FormatBytes(total), after, gcThresholdPercent)
	}
	return nil
}

// FormatBytes is n in the largest binary unit it fills, with one decimal: "512B", "1.5KiB",
// "30.0GiB".
func FormatBytes(n int64) string {
	const unit = 1024
	if n < unit && n > -unit {
		return fmt.Sprintf("%dB", n)
	}
	value := float64(n)
	prefixes := "KMGTPE"
	i := -1
	for math.Abs(value) >= unit && i < len(prefixes)-1 {
		value /= unit
		i++
	}
	return fmt.Sprintf("%.1f%ciB", value, prefixes[i])
}

// statfs gives the free space (available to unprivileged users) and the size, in bytes, of
// the filesystem holding dir.
func statfs(dir string) (free, total int64, err error) {
	var st syscall.Statfs_t
	if err := syscall.Statfs(dir, &st); err != nil {
		return 0, 0, fmt.Errorf("reading the filesystem of %s: %w", dir, err)
	}
	size := clamp(uint64(st.Bsize)) //nolint:gosec // G115: a block size is positive and small.
	return clamp(st.Bavail) * size, clamp(st.Blocks) * size, nil
}

// clamp is n as an int64, math.MaxInt64 when it does not fit.
func clamp(n uint64) int64 {
	if n > math.MaxInt64 {
		return math.MaxInt64
	}
	return int64(n)
}
