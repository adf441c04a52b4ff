# Runs its arguments in a new user namespace that maps ids 0-65535 to themselves, as a
# user-namespaced container runtime maps a range (root and the image's users), not one id.
# unshare(1) can map a range only through newuidmap, which the image does not have: here the
# parent, root outside the namespace, writes the child's maps. Needs only perl-base.
use strict;
use warnings;

my $CLONE_NEWUSER = 0x10000000;
my $SYS_UNSHARE = 272;    # x86_64

pipe(my $ready_r, my $ready_w) or die "pipe: $!";
pipe(my $mapped_r, my $mapped_w) or die "pipe: $!";
my $pid = fork() // die "fork: $!";
if ($pid == 0) {
    close $ready_r;
    close $mapped_w;
    syscall($SYS_UNSHARE, $CLONE_NEWUSER) == 0 or die "unshare: $!";
    syswrite($ready_w, 'u');
    close $ready_w;
    sysread($mapped_r, my $byte, 1);
    close $mapped_r;
    exec {$ARGV[0]} @ARGV or die "exec $ARGV[0]: $!";
}
close $ready_w;
close $mapped_r;
sysread($ready_r, my $byte, 1);
for my $map ('uid_map', 'gid_map') {
    open(my $file, '>', "/proc/$pid/$map") or die "$map: $!";
    print {$file} "0 0 65536\n";
    close $file or die "$map: $!";
}
syswrite($mapped_w, 'm');
close $mapped_w;
waitpid($pid, 0);
exit($? & 127 ? 128 + ($? & 127) : $? >> 8);
