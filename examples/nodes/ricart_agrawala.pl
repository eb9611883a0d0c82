#!/usr/bin/perl
# Ricart-Agrawala for `mutexlab test mutex --node "perl examples/nodes/ricart_agrawala.pl"`,
# Perl core modules only, written outside mutexlab from docs/test-any-program.md alone.
# Its JSON style on purpose: spaces around ":" and ",", the "type" key last, a body's keys in
# Perl's own hash order (another in every process), a unicode remark. Flags: --broken (replies
# while inside), --hang (ignores its input after its first request: never says done), --chatty (a banner on
# stdout), --huge (a 10 MB log line at its first request), --die (exits at its second request),
# --deaf (ignores SIGTERM, SIGINT, SIGHUP and the end of its input: never exits by itself)
use strict;
use warnings;
use JSON::PP;
use utf8;

my %flag = map { $_ => 1 } @ARGV;
binmode STDIN, ':encoding(UTF-8)';
binmode STDOUT, ':encoding(UTF-8)';
$| = 1;
my $json = JSON::PP->new->canonical(0)->space_before(1)->space_after(1)->allow_nonref;
print "Ricart-Agrawala in Perl, ready\n" if $flag{'--chatty'};
$SIG{$_} = 'IGNORE' for $flag{'--deaf'} ? qw(TERM INT HUP PIPE) : ();
my $requests = 0;

my ($me, @peers, $clock, $wanting, $inside, $my_ts, %replied, @deferred);

sub out {
    my (%kv) = @_;
    my $type = delete $kv{type};
    # hand-made object so that "type" comes last
    my @parts = map { $json->encode($_) . ' : ' . $json->encode($kv{$_}) } sort { $b cmp $a } keys %kv;
    push @parts, '"type" : ' . $json->encode($type);
    print '{ ' . join(' , ', @parts) . " }\n";
}
sub send_to { my ($to, $body) = @_; print '{ "to" : ' . $to . ' , "body" : ' . $json->encode($body) . " , \"type\" : \"send\" }\n" }

while (my $line = <STDIN>) {
    my $in = $json->decode($line);
    my $t = $in->{type};
    if ($t eq 'init') {
        $me = $in->{id}; @peers = @{ $in->{peers} };
        $clock = 0; $wanting = 0; $inside = 0; %replied = (); @deferred = (); $requests = 0;
        print "{ \"reinit\" : true , \"type\" : \"done\" }\n";
        next;
    } elsif ($t eq 'request') {
        $clock++; $my_ts = $clock; $wanting = 1; %replied = ();
        send_to($_, { kind => 'ŻĄDANIE', ts => $my_ts * 1.0, type => 'REQUEST', uwaga => 'proszę ✓' }) for @peers;
        if (!@peers) { $inside = 1; out(type => 'enter', resource => 'cs'); }
        if ($flag{'--hang'}) { sleep 1 while 1; }
        print '{"type":"log","junk":"', 'x' x 10_000_000, "\"}\n" if $flag{'--huge'};
        exit 3 if $flag{'--die'} && ++$requests == 2;
    } elsif ($t eq 'release') {
        $inside = 0; $wanting = 0;
        out(type => 'exit', resource => 'cs');
        send_to($_, { type => 'REPLY', ts => $clock }) for @deferred;
        @deferred = ();
    } elsif ($t eq 'recv') {
        my $b = $in->{body}; my $from = $in->{from};
        $clock = ($b->{ts} > $clock ? int($b->{ts}) : $clock) + 1;
        if ($b->{type} eq 'REQUEST') {
            my $mine_first = $wanting && ($my_ts < $b->{ts} || ($my_ts == $b->{ts} && $me < $from));
            if (($inside && !$flag{'--broken'}) || (!$inside && $mine_first)) { push @deferred, $from }
            else { send_to($from, { type => 'REPLY', ts => $clock }) }
        } elsif ($b->{type} eq 'REPLY' && $wanting && !$inside) {
            $replied{$from} = 1;
            if (keys(%replied) == @peers) { $inside = 1; out(type => 'enter', resource => 'cs', units => 1.0) }
        }
    }
    print "{\"type\":\"done\"}\n";
}
sleep 1 while $flag{'--deaf'};
