# Stand-ins for the AOSP macros scopedfsd.te uses (system/sepolicy public/global_macros and
# te_macros), written for sepolicy_test.sh with the same names and the same expansion in kind:
# permission sets, a daemon started by init, read access to a directory tree.
define(`x_file_perms', `{ getattr execute execute_no_trans map }')
define(`r_file_perms', `{ getattr open read ioctl lock map }')
define(`w_file_perms', `{ open append write lock map }')
define(`rw_file_perms', `{ r_file_perms w_file_perms }')
define(`r_dir_perms', `{ open getattr read search ioctl lock }')
define(`rw_dir_perms', `{ r_dir_perms add_name remove_name write }')
define(`create_file_perms', `{ create rename setattr unlink rw_file_perms }')
define(`create_dir_perms', `{ create reparent rename rmdir setattr rw_dir_perms }')
define(`create_socket_perms', `{ create bind connect getattr setattr read write getopt setopt shutdown }')
define(`create_stream_socket_perms', `{ create_socket_perms }')
define(`r_dir_file', `
allow $1 $2:dir r_dir_perms;
allow $1 $2:{ file lnk_file } r_file_perms;
')
define(`domain_trans', `
allow $1 $2:file { getattr open read execute map };
allow $1 $3:process transition;
allow $3 $2:file { entrypoint open read execute getattr map };
')
define(`domain_auto_trans', `
domain_trans($1,$2,$3)
type_transition $1 $2:process $3;
')
define(`init_daemon_domain', `
domain_auto_trans(init, $1_exec, $1)
')
