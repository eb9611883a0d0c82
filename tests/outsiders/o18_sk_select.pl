#!/usr/bin/perl
# Suzuki-Kasami broadcast token mutex -- a mutexlab node (see test-any-program.md)
#
# usage:  mutexlab test mutex --node "perl o18_sk_select.pl"
#
# Reads STDIN with IO::Select + sysread (no PerlIO buffering on the input side), one JSON
# object per line.  Node 1 starts with the token.  RN = highest request number heard per node,
# LN (in the token) = request number last served per node, Q (in the token) = who waits.
#
# BROKEN_SK=1 in the environment: a holder inside its critical section hands the token to
# whoever asks (it should wait until it leaves).
use strict;
use warnings;
use IO::Select;
use JSON::PP;

$| = 1;    # STDOUT into a pipe is block-buffered otherwise

my $json   = JSON::PP->new->canonical(0);
my $broken = $ENV{BROKEN_SK} ? 1 : 0;

my ( $me, $n, @peers );
my ( @RN, $token, $inside, $waiting );

sub reset_node {
    my ($init) = @_;
    $me     = $init->{id};
    $n      = $init->{nodes};
    @peers  = @{ $init->{peers} };
    @RN     = (0) x ( $n + 1 );
    $inside = 0;
    $waiting = 0;
    $token  = $me == 1 ? { ln => [ (0) x ( $n + 1 ) ], q => [] } : undef;
}

my @out;
sub emit { push @out, $_[0] }

sub send_token {
    my ($to) = @_;
    emit( { type => 'send', to => $to + 0, body => { type => 'TOKEN', ln => $token->{ln}, q => $token->{q} } } );
    $token = undef;
}

sub on_request {
    if ($token) {    # idle with the token in hand: straight in
        $inside = 1;
        emit( { type => 'enter', resource => 'cs' } );
        return;
    }
    $RN[$me]++;
    $waiting = 1;
    for my $p ( sort { $a <=> $b } @peers ) {
        emit( { type => 'send', to => $p + 0, body => { type => 'REQUEST', who => $me, sn => $RN[$me] } } );
    }
}

sub on_release {
    $inside = 0;
    emit( { type => 'exit', resource => 'cs' } );
    $token->{ln}[$me] = $RN[$me];
    my %queued = map { $_ => 1 } @{ $token->{q} };
    for my $j ( 1 .. $n ) {
        next if $j == $me || $queued{$j};
        push @{ $token->{q} }, $j if $RN[$j] == $token->{ln}[$j] + 1;
    }
    if ( @{ $token->{q} } ) {
        my $next = shift @{ $token->{q} };
        send_token($next);
    }
}

sub on_recv {
    my ( $from, $body ) = @_;
    my $kind = $body->{type} // '';
    if ( $kind eq 'REQUEST' ) {
        my ( $j, $sn ) = ( $body->{who}, $body->{sn} );
        $RN[$j] = $sn if $sn > $RN[$j];
        if ( $token && ( !$inside || $broken ) && $RN[$j] == $token->{ln}[$j] + 1 ) {
            send_token($j);
        }
    }
    elsif ( $kind eq 'TOKEN' ) {
        $token = { ln => [ @{ $body->{ln} } ], q => [ @{ $body->{q} } ] };
        if ($waiting) {
            $waiting = 0;
            $inside  = 1;
            emit( { type => 'enter', resource => 'cs' } );
        }
    }
    else {
        print STDERR "node $me: unknown message from $from: ", $json->encode($body), "\n";
    }
}

sub handle {
    my ($msg) = @_;
    my $t = $msg->{type};
    @out = ();
    if ( $t eq 'init' ) {
        reset_node($msg);
        print $json->encode( { type => 'done', reinit => JSON::PP::true } ), "\n";
        return;
    }
    if    ( $t eq 'request' ) { on_request() }
    elsif ( $t eq 'release' ) { on_release() }
    elsif ( $t eq 'recv' )    { on_recv( $msg->{from}, $msg->{body} ) }
    print $json->encode($_), "\n" for @out;
    print $json->encode( { type => 'done' } ), "\n";
}

my $sel = IO::Select->new( \*STDIN );
my $buf = '';
READ: while (1) {
    my @ready = $sel->can_read(60);
    next READ unless @ready;
    my $got = sysread( STDIN, my $chunk, 4096 );
    die "read: $!" unless defined $got;
    last READ if $got == 0;
    $buf .= $chunk;
    while ( ( my $nl = index( $buf, "\n" ) ) >= 0 ) {
        my $line = substr( $buf, 0, $nl );
        substr( $buf, 0, $nl + 1 ) = '';
        next unless $line =~ /\S/;
        handle( $json->decode($line) );
    }
}
print STDERR "node ", ( $me // '?' ), ": stdin closed, bye\n";
