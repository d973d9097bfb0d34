package geoind

import (
	"fmt"
	"io/fs"
	"runtime"
)

// checkPrivate refuses a key file that others can read or write, as ssh
// does: the seal is only as strong as the key's secrecy. Windows has no
// Unix permission bits to check.
func checkPrivate(path string, fi fs.FileInfo) error {
	if runtime.GOOS == "windows" {
		return nil
	}
	if fi.Mode().Perm()&0o077 != 0 {
		return fmt.Errorf("geoind: %s: the state key is accessible by others (mode %v); run chmod 600 %s", path, fi.Mode().Perm(), path)
	}
	return nil
}
