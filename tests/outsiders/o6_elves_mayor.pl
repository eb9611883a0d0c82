#!/usr/bin/perl
# The hamster killers for mutexlab's node protocol, in Perl with JSON::PP (a core module):
# the mayor (node 0) keeps the town's pins and poison and the round's contracts, and hands a
# contract with its tools to an elf that asks (WORK), once the tools are there; the elf does it
# in one go and says DONE (which also asks for more). Once every contract of the round is done
# the mayor STOPs the round and begins the next. Written from docs/test-any-program.md alone.
#   --no-reset   the mayor never resets its count of contracts done at a new round
use strict;
use warnings;
use JSON::PP;

my $NO_RESET = grep { $_ eq '--no-reset' } @ARGV;
my $json = JSON::PP->new->utf8->canonical(0);
$| = 1;
my (%opt, @plan, $id, $clock, @out);
my ($round, $next, $done, $pins, $poison, @queue);    # the mayor's
my ($elf_round);                                      # an elf's

sub emit { push @out, $json->encode($_[0]) . "\n" }
sub send_to { my ($to, $body) = @_; $body->{sender} = $id; $body->{ts} = ++$clock; emit({ type => 'send', to => $to + 0, body => $body }) }

sub begin_round {
    $round++;
    ($next, $pins, $poison) = (1, $opt{pins}, $opt{poison});
    $done = 0 unless $NO_RESET;
    emit({ type => 'event', event => 'round', round => $round + 0, contracts => $plan[$round - 1] });
    serve();
}

sub serve {    # hand out contracts in order while the next one's tools are there
    my $list = $plan[$round - 1];
    while (@queue && $next <= @$list) {
        my $h = $list->[$next - 1];
        my $need = $h * $opt{poison_per_hamster};
        last if $pins < $opt{pins_per_elf} || $poison < $need;
        $pins -= $opt{pins_per_elf};
        $poison -= $need;
        send_to(shift @queue, { type => 'JOB', round => $round, contract => $next, hamsters => $h });
        $next++;
    }
}

sub mayor_recv {
    my ($from, $m) = @_;
    if ($m->{type} eq 'DONE') {
        $pins += $opt{pins_per_elf};
        $poison += $m->{hamsters} * $opt{poison_per_hamster};
        $done++;
    }
    push @queue, $from if $m->{type} eq 'DONE' || $m->{type} eq 'WORK';
    my $count = scalar @{ $plan[$round - 1] };
    if ($m->{type} eq 'DONE' && $done >= $count) {
        send_to($_, { type => 'STOP', round => $round }) for 1 .. $opt{elves};
        if ($round < $opt{rounds}) { begin_round() }
        else { emit({ type => 'state', state => 'MAYOR_DONE' }) }
        return;
    }
    serve();
}

sub elf_recv {
    my ($m) = @_;
    if ($m->{type} eq 'JOB') {
        my ($r, $c, $h) = @$m{qw(round contract hamsters)};
        emit({ type => 'state', state => 'ELF_WORKING' });
        emit({ type => 'enter', resource => "contract:$r.$c" });
        emit({ type => 'enter', resource => 'pins', units => $opt{pins_per_elf} });
        emit({ type => 'enter', resource => 'poison', units => $h * $opt{poison_per_hamster} });
        emit({ type => 'event', event => 'contract_done', round => $r, contract => $c, hamsters => $h });
        emit({ type => 'exit', resource => 'poison', units => $h * $opt{poison_per_hamster} });
        emit({ type => 'exit', resource => 'pins', units => $opt{pins_per_elf} });
        emit({ type => 'exit', resource => "contract:$r.$c" });
        emit({ type => 'state', state => 'ELF_IDLE' });
        send_to(0, { type => 'DONE', round => $r, contract => $c, hamsters => $h });
    } elsif ($m->{type} eq 'STOP') {
        emit({ type => 'state', state => 'ELF_DONE' }) if $m->{round} == $opt{rounds};
    }
}

while (my $line = <STDIN>) {
    next unless $line =~ /\S/;
    my $in = $json->decode($line);
    @out = ();
    my $reinit = JSON::PP::false;
    if ($in->{type} eq 'init') {
        %opt = %{ $in->{options} };
        @plan = @{ $opt{plan} };
        ($id, $clock, $round, $done, @queue) = ($in->{id}, 0, 0, 0);
        $reinit = JSON::PP::true;
        if ($id == 0) { begin_round() } else { send_to(0, { type => 'WORK' }) }
    } elsif ($in->{type} eq 'recv') {
        $clock = $in->{body}{ts} if $in->{body}{ts} > $clock;
        if ($id == 0) { mayor_recv($in->{from}, $in->{body}) } else { elf_recv($in->{body}) }
    } else {
        print STDERR "elves_mayor: unexpected $in->{type}\n";
    }
    emit({ type => 'done', ($in->{type} eq 'init' ? (reinit => $reinit) : ()) });
    print @out;
}
