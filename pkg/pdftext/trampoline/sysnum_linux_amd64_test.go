package trampoline

import "golang.org/x/sys/unix"

func archNumbers() map[string][2]uint64 {
	return map[string][2]uint64{"IOPL": {nrIopl, unix.SYS_IOPL}, "IOPERM": {nrIoperm, unix.SYS_IOPERM}, "MODIFY_LDT": {nrModifyLdt, unix.SYS_MODIFY_LDT}, "USELIB": {nrUselib, unix.SYS_USELIB}, "USTAT": {nrUstat, unix.SYS_USTAT}, "SYSFS": {nrSysfs, unix.SYS_SYSFS}, "_SYSCTL": {nrSysctl, unix.SYS__SYSCTL}, "CREATE_MODULE": {nrCreateModule, unix.SYS_CREATE_MODULE}, "GET_KERNEL_SYMS": {nrGetKernelSyms, unix.SYS_GET_KERNEL_SYMS}, "QUERY_MODULE": {nrQueryModule, unix.SYS_QUERY_MODULE}}
}
