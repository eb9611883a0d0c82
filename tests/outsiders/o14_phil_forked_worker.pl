#!/usr/bin/env perl
# Dining philosophers for mutexlab's line protocol, written from the docs alone.
#
# Unix-tool habits: the program says who it is on standard error and starts its output with a
# blank line; then it forks a worker that keeps the philosopher's state, and the parent only
# pumps standard input into a pipe to it. The worker writes its answers straight to the standard
# output it inherited.
#
# Forks: fork i (philosopher i's left) lives at philosopher i, who lends it on request (REQ) when
# it does not use it and gets it back (RET) after the borrower's meal. A hungry philosopher takes
# its two forks lower number first (resource hierarchy): no cycle of waiting.
#
# --left-first takes the left fork first, whatever its number: philosophers 1 and 2 of two each
# hold their own fork and ask for the other's.
use strict;
use warnings;
use IO::Handle;
use JSON::PP;
use POSIX ();

my $LEFT_FIRST = grep { $_ eq '--left-first' } @ARGV;

print STDERR "phil-worker 0.3 -- dining philosopher (usage: $0 [--left-first])\n";
STDOUT->autoflush(1);
print STDOUT "\n";

pipe(my $from_parent, my $to_worker) or die "pipe: $!";
my $worker = fork();
die "fork: $!" unless defined $worker;

if ($worker) {    # the parent: standard input into the pipe, line by line
    close $from_parent;
    $to_worker->autoflush(1);
    while (my $line = <STDIN>) {
        print {$to_worker} $line;
    }
    close $to_worker;
    waitpid($worker, 0);
    exit($? >> 8);
}

close $to_worker;
my $json = JSON::PP->new->canonical;
my ($me, $n, $state, %have, %lent, @waiting, @queue, $need, $eating);

sub out { print STDOUT $json->encode($_[0]), "\n" }

sub left  { $me }
sub right { $me % $n + 1 }
sub home  { $_[0] }    # fork f lives at philosopher f

sub order {
    my @f = (left(), right());
    return @f if $LEFT_FIRST;
    return sort { $a <=> $b } @f;
}

sub ask_next {    # take the next fork of the order, if there is one to take
    for my $f (order()) {
        next if $have{$f};
        if (home($f) == $me) {
            if ($lent{$f}) { return }    # back when its borrower is done
            $have{$f} = 1;
            next;
        }
        out({type => 'send', to => home($f), body => {type => 'REQ', fork => $f}}) unless $need->{$f}++;
        return;
    }
    eat();
}

sub eat {
    $eating = 1;
    out({type => 'enter', resource => "fork:" . left()});
    out({type => 'enter', resource => "fork:" . right()});
    out({type => 'enter', resource => 'meal'});
    out({type => 'state', state => 'EATING'});
}

sub lend {    # a neighbour asks for fork f, which lives here
    my ($f, $who) = @_;
    if ($have{$f} || $lent{$f}) {
        push @queue, [$f, $who];
        return;
    }
    $lent{$f} = $who;
    out({type => 'send', to => $who, body => {type => 'FORK', fork => $f}});
}

sub returned {
    my ($f) = @_;
    delete $lent{$f};
    my @still;
    for my $q (@queue) {
        if ($q->[0] == $f && !$lent{$f} && !$have{$f}) { lend(@$q) }
        else                                          { push @still, $q }
    }
    @queue = @still;
    ask_next() if $state eq 'HUNGRY' && !$eating;
}

while (my $line = <$from_parent>) {
    next unless $line =~ /\S/;
    my $msg  = $json->decode($line);
    my $type = $msg->{type};
    if ($type eq 'init') {
        ($me, $n) = ($msg->{id}, $msg->{nodes});
        $state = 'THINKING';
        %have = (); %lent = (); @queue = (); $need = {}; $eating = 0;
        out({type => 'done', reinit => JSON::PP::true});
        next;
    }
    if ($type eq 'request') {
        $state = 'HUNGRY';
        out({type => 'state', state => 'HUNGRY'});
        $need = {};
        ask_next();
    }
    elsif ($type eq 'release') {
        out({type => 'exit', resource => 'meal'});
        out({type => 'exit', resource => "fork:" . left()});
        out({type => 'exit', resource => "fork:" . right()});
        out({type => 'state', state => 'THINKING'});
        ($state, $eating) = ('THINKING', 0);
        for my $f (left(), right()) {
            delete $have{$f};
            if (home($f) == $me) { returned($f) }
            else { out({type => 'send', to => home($f), body => {type => 'RET', fork => $f}}) }
        }
    }
    elsif ($type eq 'recv') {
        my ($body, $from) = ($msg->{body}, $msg->{from});
        if    ($body->{type} eq 'REQ')  { lend($body->{fork}, $from) }
        elsif ($body->{type} eq 'RET')  { returned($body->{fork}) }
        elsif ($body->{type} eq 'FORK') { $have{$body->{fork}} = 1; ask_next() }
    }
    out({type => 'done'});
}
POSIX::_exit(0);
