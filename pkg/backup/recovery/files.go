package recovery

import (
	"archive/tar"
	"compress/gzip"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
)

// copyTree copies the tree at src to dst: directories, regular files and symbolic links,
// with their modes (and owners when keepOwners); sockets, devices and pipes are left out. A
// missing src copies nothing.
func copyTree(src, dst string, keepOwners bool) error {
	return filepath.WalkDir(src, func(path string, d fs.DirEntry, err error) error {
		if errors.Is(err, fs.ErrNotExist) && path == src {
			return fs.SkipAll
		}
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(src, path)
		if err != nil {
			return err
		}
		target := filepath.Join(dst, rel)
		if !d.IsDir() {
			return copyEntry(path, target, d, keepOwners)
		}
		return makeDir(target, d, keepOwners)
	})
}

// makeDir makes the directory target with the mode (and owner, when keepOwners) of d.
func makeDir(target string, d fs.DirEntry, keepOwners bool) error {
	info, err := d.Info()
	if err != nil {
		return err
	}
	if err := os.MkdirAll(target, 0o700); err != nil {
		return err
	}
	if err := os.Chmod(target, info.Mode().Perm()); err != nil {
		return err
	}
	return chown(target, info, keepOwners)
}

// chown gives target the owner of info, when keep.
func chown(target string, info fs.FileInfo, keep bool) error {
	if !keep {
		return nil
	}
	if st, ok := info.Sys().(*syscall.Stat_t); ok {
		return os.Lchown(target, int(st.Uid), int(st.Gid))
	}
	return nil
}

// copyFile copies a regular file with mode.
func copyFile(src, dst string, mode fs.FileMode) error {
	in, err := os.Open(src)
	if err != nil {
		return err
	}
	defer func() { _ = in.Close() }()
	out, err := os.OpenFile(dst, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, mode)
	if err != nil {
		return err
	}
	if _, err := io.Copy(out, in); err != nil {
		_ = out.Close()
		return err
	}
	if err := out.Close(); err != nil {
		return err
	}
	return os.Chmod(dst, mode)
}

// machineConfigFiles are the paths of the files the machine config writes, from the
// machine-config daemon's current config (a MachineConfig as JSON); none when it has none.
func machineConfigFiles(o Options) ([]string, error) {
	data, err := os.ReadFile(o.node(machineConfig))
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	var mc struct {
		Spec struct {
			Config struct {
				Storage struct {
					Files []struct {
						Path string `json:"path"`
					} `json:"files"`
				} `json:"storage"`
			} `json:"config"`
		} `json:"spec"`
	}
	if err := json.Unmarshal(data, &mc); err != nil {
		return nil, fmt.Errorf("reading %s: %w", machineConfig, err)
	}
	var out []string
	for _, f := range mc.Spec.Config.Storage.Files {
		if f.Path != "" && !slices.Contains(out, f.Path) {
			out = append(out, f.Path)
		}
	}
	slices.Sort(out)
	return out, nil
}

// saveExtras archives the machine config's files that are outside the copied trees (and
// exist) into PartExtras, with their paths relative to the node's root.
func saveExtras(o Options) error {
	files, err := machineConfigFiles(o)
	if err != nil {
		return err
	}
	out, err := os.OpenFile(o.dir(PartExtras), os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o600)
	if err != nil {
		return err
	}
	gz := gzip.NewWriter(out)
	tw := tar.NewWriter(gz)
	for _, f := range files {
		if inCopiedTree(f) {
			continue
		}
		if err := addToTar(tw, o.node(f), strings.TrimPrefix(filepath.Clean(f), "/")); err != nil {
			_ = out.Close()
			return fmt.Errorf("archiving %s: %w", f, err)
		}
	}
	err = errors.Join(tw.Close(), gz.Close())
	return errors.Join(err, out.Close())
}

func inCopiedTree(path string) bool {
	for _, t := range copiedTrees {
		if path == t.path || strings.HasPrefix(path, t.path+"/") {
			return true
		}
	}
	return false
}

// addToTar adds the regular file at path as name; a missing file is left out.
func addToTar(tw *tar.Writer, path, name string) error {
	info, err := os.Lstat(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return err
	}
	if !info.Mode().IsRegular() {
		return nil
	}
	hdr, err := tar.FileInfoHeader(info, "")
	if err != nil {
		return err
	}
	hdr.Name = name
	if err := tw.WriteHeader(hdr); err != nil {
		return err
	}
	f, err := os.Open(path)
	if err != nil {
		return err
	}
	defer func() { _ = f.Close() }()
	_, err = io.Copy(tw, f)
	return err
}
