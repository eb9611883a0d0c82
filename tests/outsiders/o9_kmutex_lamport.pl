#!/usr/bin/perl
# K-mutual exclusion with Lamport's queue, for mutexlab's node protocol, in Perl: every node keeps
# every request in (ts, id) order, acknowledges each one, and enters once every other node has
# acknowledged its own and fewer than K requests are ahead of it. Inputs decoded with JSON::PP (a
# core module), outputs written by hand with printf. Written from docs/test-any-program.md alone.
#   --k-off     counts "ahead of me" one short: K + 1 inside
#   --no-flush  forgets $| = 1 (STDOUT into a pipe is block-buffered: the answers never leave)
#   --debug     prints the queue on STDOUT, not STDERR, after each request
use strict;
use warnings;
use JSON::PP qw(decode_json);

my %flag = map { $_ => 1 } @ARGV;
$| = 1 unless $flag{'--no-flush'};

my ($me, @peers, $k, $clock, @queue, %acked, $mine, $inside);

sub line { printf "%s\n", $_[0] }
sub sendto {
    my ($to, $type, $ts) = @_;
    line(sprintf '{"type":"send","to":%d,"body":{"type":"%s","ts":%d}}', $to, $type, $ts);
}
sub by_stamp { $a->[0] <=> $b->[0] or $a->[1] <=> $b->[1] }
sub try_enter {
    return unless defined $mine && !$inside;
    return if grep { !$acked{$_} } @peers;
    my @ahead = grep { by_stamp_lt($_, [$mine, $me]) } @queue;
    my $room = $flag{'--k-off'} ? $k + 1 : $k;
    return unless @ahead < $room;
    $inside = 1;
    line('{"type":"enter","resource":"cs"}');
}
sub by_stamp_lt { my ($x, $y) = @_; $x->[0] < $y->[0] || ($x->[0] == $y->[0] && $x->[1] < $y->[1]) }

while (my $text = <STDIN>) {
    next unless $text =~ /\S/;
    my $in = decode_json($text);
    my $type = $in->{type};
    my $done = '{"type":"done"}';
    if ($type eq 'init') {
        $me = $in->{id}; @peers = @{ $in->{peers} }; $k = $in->{options}{k};
        $clock = 0; @queue = (); %acked = (); $mine = undef; $inside = 0;
        $done = '{"type":"done","reinit":true}';
    } elsif ($type eq 'request') {
        $mine = ++$clock; %acked = ();
        push @queue, [$mine, $me];
        @queue = sort by_stamp @queue;
        sendto($_, 'REQUEST', $mine) for @peers;
        print "queue: ", join(' ', map { "$_->[0]/$_->[1]" } @queue), "\n" if $flag{'--debug'};
        try_enter();
    } elsif ($type eq 'release') {
        line('{"type":"exit","resource":"cs"}');
        @queue = grep { $_->[1] != $me } @queue;
        $inside = 0; $mine = undef; $clock++;
        sendto($_, 'RELEASE', $clock) for @peers;
    } elsif ($type eq 'recv') {
        my ($from, $body) = ($in->{from}, $in->{body});
        $clock = ($body->{ts} > $clock ? $body->{ts} : $clock) + 1;
        if ($body->{type} eq 'REQUEST') {
            push @queue, [$body->{ts}, $from];
            @queue = sort by_stamp @queue;
            sendto($from, 'ACK', $clock);
        } elsif ($body->{type} eq 'ACK') {
            $acked{$from} = 1;
        } elsif ($body->{type} eq 'RELEASE') {
            @queue = grep { $_->[1] != $from } @queue;
        }
        try_enter();
    }
    line($done);
}
