package historyjson

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"syscall"
)

// OpenInput opens a file lockcheck was handed to read. Only a regular file
// is opened: opening a FIFO waits for a writer that may never come, a
// device may never end, and a folder is not the file. The error names the
// path and what it is instead.
func OpenInput(path string) (*os.File, os.FileInfo, error) {
	fi, err := os.Stat(path)
	if err != nil {
		return nil, nil, inputErr(path, err)
	}
	if !fi.Mode().IsRegular() {
		return nil, nil, &inputError{fmt.Sprintf("%s is %s, not a regular file: give a file", path, modeName(fi.Mode())), nil}
	}
	f, err := os.Open(path)
	if err != nil {
		return nil, nil, inputErr(path, err)
	}
	return f, fi, nil
}

// inputErr says why path cannot be read, keeping err for errors.Is.
func inputErr(path string, err error) error {
	if errors.Is(err, syscall.ELOOP) {
		return &inputError{PathProblem(path, err) + ": point it at a file", err}
	}
	return PathError(path, err)
}

// PathError is PathProblem as an error that keeps err for errors.Is (a
// path below a file does not exist).
func PathError(path string, err error) error {
	if errors.Is(err, syscall.ENOTDIR) {
		err = fs.ErrNotExist
	}
	return &inputError{PathProblem(path, err), err}
}

// PathProblem says in words what stat or open found wrong with path.
func PathProblem(path string, err error) string {
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return path + " does not exist"
	case errors.Is(err, syscall.ELOOP):
		return path + " is a loop of symbolic links"
	case errors.Is(err, syscall.ENOTDIR):
		return path + ": a part of its path is a file, not a folder"
	case errors.Is(err, fs.ErrPermission):
		return path + ": permission denied"
	}
	return err.Error()
}

// inputError is a message that says it all, over the error it explains.
type inputError struct {
	msg string
	err error
}

func (e *inputError) Error() string        { return e.msg }
func (e *inputError) Unwrap() error        { return e.err }
func (e *inputError) Is(target error) bool { return target == ErrUnreadable }

// ErrUnreadable is what every error of OpenInput and PathError is: the
// path could not be read at all, and the message says why and what to
// give instead (a caller adds no advice of its own about the contents).
var ErrUnreadable = errors.New("cannot be read")

// modeName names a file type that is not a regular file.
func modeName(m fs.FileMode) string {
	switch {
	case m.IsDir():
		return "a folder"
	case m&fs.ModeNamedPipe != 0:
		return "a FIFO"
	case m&fs.ModeSocket != 0:
		return "a socket"
	case m&fs.ModeDevice != 0:
		return "a device"
	}
	return "a special file"
}
