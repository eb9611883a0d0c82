#!/usr/bin/env escript
%% -*- erlang -*-
%% k-mutual exclusion (Raymond 1989: Ricart-Agrawala waiting for N-K replies) for mutexlab's node
%% protocol, docs/test-any-program.md. Erlang/OTP 25 (no json module yet), so a little decoder of
%% our own. One process per concern, as we were taught: a reader turns stdin into messages, a
%% clock process keeps the Lamport clock, a table process the deferred requests, and a writer
%% process owns stdout; the node process asks each by call (send, then receive the reply), so
%% everything an input causes is with the writer before it is told to write the done line.
%%
%% A REPLY carries the stamp of the request it answers: a late reply to an earlier request of
%% ours is not counted for the next one.
%%   BROKEN_COUNT=1  enters with one reply too few (K + 1 inside)
%%   BROKEN_STALE=1  counts every reply, whatever request it answers
-mode(compile).

main(_Args) ->
    Env = fun(V) -> os:getenv(V) =:= "1" end,
    Writer = spawn_link(fun() -> writer([]) end),
    Clock = spawn_link(fun() -> clock(0) end),
    Table = spawn_link(fun() -> table([]) end),
    Node = self(),
    spawn_link(fun() -> reader(Node) end),
    serve(#{writer => Writer, clock => Clock, table => Table,
           short => Env("BROKEN_COUNT"), stale => Env("BROKEN_STALE")}).

%% --- the processes -----------------------------------------------------------------------------

reader(Node) ->
    case io:get_line(standard_io, "") of
        eof -> Node ! eof;
        {error, _} -> Node ! eof;
        Line -> Node ! {line, unicode:characters_to_binary(Line)}, reader(Node)
    end.

writer(Lines) ->
    receive
        {out, Line} -> writer([Line | Lines]);
        {done, Line, From} ->
            io:put_chars(standard_io, [[L, $\n] || L <- lists:reverse([Line | Lines])]),
            From ! written,
            writer([])
    end.

clock(T) ->
    receive
        {tick, From} -> From ! {clock, T + 1}, clock(T + 1);
        {witness, S, From} -> N = max(T, S) + 1, From ! {clock, N}, clock(N);
        {reset, From} -> From ! {clock, 0}, clock(0)
    end.

table(Deferred) ->
    receive
        {defer, Who, Ts, From} -> From ! ok, table([{Who, Ts} | Deferred]);
        {take, From} -> From ! {deferred, lists:reverse(Deferred)}, table([]);
        {reset, From} -> From ! ok, table([])
    end.

call(Pid, Msg) ->
    Pid ! Msg,
    receive
        {clock, T} -> T;
        {deferred, L} -> L;
        ok -> ok
    end.

%% --- the node ---------------------------------------------------------------------------------

serve(S) ->
    receive
        eof -> halt(0);
        {line, Raw} ->
            case string:trim(Raw) of
                <<>> -> serve(S);
                Text ->
                    {Msg, _} = decode(Text),
                    S1 = handle(maps:get(<<"type">>, Msg), Msg, S),
                    Done = case maps:get(<<"type">>, Msg) of
                               <<"init">> -> <<"{\"type\":\"done\",\"reinit\":true}">>;
                               _ -> <<"{\"type\":\"done\"}">>
                           end,
                    maps:get(writer, S1) ! {done, Done, self()},
                    receive written -> ok end,
                    serve(S1)
            end
    end.

out(S, Line) -> maps:get(writer, S) ! {out, Line}.

send(S, To, Type, Ts) ->
    out(S, io_lib:format("{\"type\":\"send\",\"to\":~b,\"body\":{\"type\":\"~s\",\"ts\":~b}}", [To, Type, Ts])).

handle(<<"init">>, M, S) ->
    call(maps:get(clock, S), {reset, self()}),
    call(maps:get(table, S), {reset, self()}),
    Opts = maps:get(<<"options">>, M),
    S#{me => maps:get(<<"id">>, M), peers => maps:get(<<"peers">>, M),
       k => maps:get(<<"k">>, Opts, 2), mode => idle, mine => none, replies => 0};
handle(<<"request">>, _M, S = #{peers := Peers}) ->
    Ts = call(maps:get(clock, S), {tick, self()}),
    [send(S, P, "REQUEST", Ts) || P <- Peers],
    maybe_enter(S#{mode => waiting, mine => Ts, replies => 0});
handle(<<"release">>, _M, S) ->
    out(S, <<"{\"type\":\"exit\",\"resource\":\"cs\"}">>),
    [send(S, Who, "REPLY", Ts) || {Who, Ts} <- call(maps:get(table, S), {take, self()})],
    S#{mode => idle, mine => none};
handle(<<"recv">>, M, S = #{me := Me, mode := Mode, mine := Mine}) ->
    From = maps:get(<<"from">>, M),
    Body = maps:get(<<"body">>, M),
    Ts = maps:get(<<"ts">>, Body),
    call(maps:get(clock, S), {witness, Ts, self()}),
    case maps:get(<<"type">>, Body) of
        <<"REQUEST">> ->
            Mine_first = Mode =:= waiting andalso {Mine, Me} < {Ts, From},
            case Mode =:= inside orelse Mine_first of
                true -> call(maps:get(table, S), {defer, From, Ts, self()});
                false -> send(S, From, "REPLY", Ts)
            end,
            S;
        <<"REPLY">> ->
            Counts = maps:get(stale, S) orelse (Mode =:= waiting andalso Ts =:= Mine),
            case Counts of
                true -> maybe_enter(S#{replies => maps:get(replies, S) + 1});
                false -> S
            end
    end.

maybe_enter(S = #{mode := waiting, peers := Peers, k := K, replies := R}) ->
    Need = length(Peers) + 1 - K - case maps:get(short, S) of true -> 1; false -> 0 end,
    case R >= Need of
        true ->
            out(S, <<"{\"type\":\"enter\",\"resource\":\"cs\"}">>),
            S#{mode => inside};
        false -> S
    end;
maybe_enter(S) -> S.

%% --- JSON, what we need of it ------------------------------------------------------------------

decode(<<C, R/binary>>) when C =:= $\s; C =:= $\t; C =:= $\r; C =:= $\n -> decode(R);
decode(<<${, R/binary>>) -> object(skip(R), #{});
decode(<<$[, R/binary>>) -> array(skip(R), []);
decode(<<$", R/binary>>) -> string(R, <<>>);
decode(<<"true", R/binary>>) -> {true, R};
decode(<<"false", R/binary>>) -> {false, R};
decode(<<"null", R/binary>>) -> {null, R};
decode(B) -> number(B, []).

skip(<<C, R/binary>>) when C =:= $\s; C =:= $\t; C =:= $\r; C =:= $\n -> skip(R);
skip(B) -> B.

object(<<$}, R/binary>>, M) -> {M, R};
object(<<$,, R/binary>>, M) -> object(skip(R), M);
object(B, M) ->
    {K, R1} = decode(B),
    <<$:, R2/binary>> = skip(R1),
    {V, R3} = decode(skip(R2)),
    object(skip(R3), M#{K => V}).

array(<<$], R/binary>>, L) -> {lists:reverse(L), R};
array(<<$,, R/binary>>, L) -> array(skip(R), L);
array(B, L) -> {V, R} = decode(B), array(skip(R), [V | L]).

string(<<$", R/binary>>, Acc) -> {Acc, R};
string(<<$\\, $u, H:4/binary, R/binary>>, Acc) ->
    string(R, <<Acc/binary, (unicode:characters_to_binary([binary_to_integer(H, 16)]))/binary>>);
string(<<$\\, C, R/binary>>, Acc) ->
    E = case C of $n -> $\n; $t -> $\t; $r -> $\r; $b -> $\b; $f -> $\f; _ -> C end,
    string(R, <<Acc/binary, E>>);
string(<<C, R/binary>>, Acc) -> string(R, <<Acc/binary, C>>).

number(<<C, R/binary>>, Acc) when (C >= $0 andalso C =< $9) orelse C =:= $- orelse C =:= $.
                                  orelse C =:= $e orelse C =:= $E orelse C =:= $+ ->
    number(R, [C | Acc]);
number(R, Acc) ->
    S = lists:reverse(Acc),
    case catch list_to_integer(S) of
        I when is_integer(I) -> {I, R};
        _ -> {list_to_float(S), R}
    end.
