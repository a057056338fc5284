//go:build !linux

package e2e

import "syscall"

// sysProcAttr has nothing to add outside Linux (no parent-death signal).
func sysProcAttr() *syscall.SysProcAttr { return nil }

// procState is unknown outside Linux.
func procState(int) string { return "" }
