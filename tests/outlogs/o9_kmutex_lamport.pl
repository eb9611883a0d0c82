#!/usr/bin/perl
# k-mutual exclusion: a semaphore server process hands out PERMITS of the "printer" pool to
# CLIENTS forked clients over pipes. Each process keeps a Lamport clock (a scalar), so, as
# docs/verify-any-log.md says, the log is clock-free JSON Lines with the sends' and receives'
# ids; the Lamport value rides along in "lamport". One shared log file opened with O_APPEND,
# one syswrite per line. perl o9_kmutex_lamport.pl LOG CLIENTS ROUNDS PERMITS [greedy|vc]
# greedy: the server counts a permit back before its release arrives (one permit too many);
# vc: the Lamport clock is written as a GoVector record instead (host {"host": lamport}).
use strict; use warnings;
use Fcntl qw(O_WRONLY O_CREAT O_APPEND O_TRUNC);
use IO::Handle; use JSON::PP; use POSIX ();
my ($logname, $clients, $rounds, $permits, $mode) = @ARGV;
$mode //= '';
sysopen(my $LOG, $logname, O_WRONLY|O_CREAT|O_TRUNC|O_APPEND) or die "$logname: $!";
my $json = JSON::PP->new->canonical;
my ($me, $lamport, $sent) = ('server', 0, 0);
sub logev {
    my (%ev) = @_;
    $lamport++;
    my $line = $mode eq 'vc'
        ? "$me {\"$me\":$lamport}\n" . join(' ', grep { defined } @ev{qw(event resource)}) . "\n"
        : $json->encode({ %ev, pid => $me, lamport => $lamport }) . "\n";
    syswrite($LOG, $line);
}
sub send_msg { # "TYPE id lamport\n" down a pipe
    my ($fh, $to, $type) = @_;
    my $id = "$me/" . $sent++;
    logev(event => 'send', type => $type, to => $to, id => $id);
    syswrite($fh, "$type $id $lamport\n");
}
sub recv_msg {
    my ($fh, $from_of) = @_;
    my $line = <$fh>; chomp $line;
    my ($type, $id, $ts, $from) = split / /, $line;
    $from //= $from_of;
    $lamport = $ts if $ts > $lamport;
    logev(event => 'recv', type => $type, from => $from, id => $id);
    return ($type, $from);
}
pipe(my $up_r, my $up_w) or die; $up_w->autoflush(1);
my (%down_w, @kids);
for my $c (1 .. $clients) {
    pipe(my $down_r, my $down_w) or die; $down_w->autoflush(1);
    my $pid = fork() // die;
    if ($pid == 0) {
        ($me, $lamport, $sent) = ("client-$c", 0, 0);
        close $up_r;
        for my $r (1 .. $rounds) {
            logev(event => 'request', resource => 'printer');
            my $id = "$me/" . $sent++;
            logev(event => 'send', type => 'ACQUIRE', to => 'server', id => $id);
            syswrite($up_w, "ACQUIRE $id $lamport $me\n");
            recv_msg($down_r, 'server');
            logev(event => 'enter', resource => 'printer');
            select(undef, undef, undef, 0.002 * (1 + $c % 3));
            logev(event => 'exit', resource => 'printer');
            $id = "$me/" . $sent++;
            logev(event => 'send', type => 'RELEASE', to => 'server', id => $id);
            syswrite($up_w, "RELEASE $id $lamport $me\n");
        }
        POSIX::_exit(0);
    }
    $down_w{"client-$c"} = $down_w; push @kids, $pid;
}
close $up_w;
my ($free, $done, @queue) = ($permits, 0);
my $once = 0;
while ($done < $clients * $rounds) {
    my ($type, $from) = recv_msg($up_r, undef);
    if ($type eq 'ACQUIRE') { push @queue, $from } else { $free++; $done++ }
    while ($free > 0 && @queue) {
        my $who = shift @queue;
        $free--;
        send_msg($down_w{$who}, $who, 'GRANT');
        $free++ if $mode eq "greedy" && $done == 1 && !$once++; # counted back early, once
    }
}
waitpid($_, 0) for @kids;
