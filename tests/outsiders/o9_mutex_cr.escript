#!/usr/bin/env escript
%% -*- erlang -*-
%% Ricart-Agrawala with Carvalho and Roucairol's optimisation, as an escript (Erlang/OTP 25, which
%% has no json module): a permission once given stays given until the other asks for it back, so a
%% node that asks again with every permission still in hand enters without a message. Written for
%% mutexlab's node protocol from docs/test-any-program.md alone. A reader process turns standard
%% input into messages to the main loop (the Erlang way); a small recursive-descent JSON parser.
%%   keep   when it yields to an earlier request it forgets to drop its own permission (unsafe)
%%   crash  a REPLY nobody asked for makes it crash with a badmatch (an Erlang error on stderr)
-mode(compile).

main(Args) ->
    Self = self(),
    spawn_link(fun() -> reader(Self) end),
    loop(#{keep => lists:member("keep", Args), crash => lists:member("crash", Args)}).

reader(Main) ->
    case io:get_line(standard_io, "") of
        eof -> Main ! eof;
        {error, _} -> Main ! eof;
        Line -> Main ! {line, string:trim(Line, trailing, "\r\n")}, reader(Main)
    end.

loop(S) ->
    receive
        eof -> halt(0);
        {line, ""} -> loop(S);
        {line, Text} ->
            {Msg, _} = value(skip(Text)),
            {S1, Out} = handle(maps:get(<<"type">>, Msg), Msg, S),
            Done = case maps:get(<<"type">>, Msg) of
                       <<"init">> -> "{\"type\":\"done\",\"reinit\":true}";
                       _ -> "{\"type\":\"done\"}"
                   end,
            io:put_chars([[L, $\n] || L <- Out ++ [Done]]),
            loop(S1)
    end.

%% --- the algorithm -------------------------------------------------------------------------

handle(<<"init">>, M, S) ->
    Me = maps:get(<<"id">>, M),
    Peers = maps:get(<<"peers">>, M),
    %% of each pair, the lower id holds the permission at the start
    Perm = maps:from_list([{P, Me < P} || P <- Peers]),
    {S#{me => Me, peers => Peers, perm => Perm, clock => 0, want => none, inside => false,
        deferred => []}, []};
handle(<<"request">>, _M, S = #{clock := C}) ->
    Ts = C + 1,
    S1 = S#{clock := Ts, want := Ts},
    Missing = [P || P <- maps:get(peers, S), not maps:get(P, maps:get(perm, S))],
    case Missing of
        [] -> enter(S1);
        _ -> {S1, [send(P, "REQUEST", Ts) || P <- Missing]}
    end;
handle(<<"release">>, _M, S = #{deferred := Def, perm := Perm}) ->
    C = maps:get(clock, S) + 1,
    Out = ["{\"type\":\"exit\",\"resource\":\"cs\"}"] ++ [send(P, "REPLY", C) || P <- lists:reverse(Def)],
    Perm1 = lists:foldl(fun(P, Acc) -> Acc#{P := false} end, Perm, Def),
    {S#{inside := false, want := none, deferred := [], perm := Perm1, clock := C}, Out};
handle(<<"recv">>, M, S) ->
    From = maps:get(<<"from">>, M),
    Body = maps:get(<<"body">>, M),
    Ts = maps:get(<<"ts">>, Body),
    S1 = S#{clock := max(maps:get(clock, S), Ts) + 1},
    on(maps:get(<<"type">>, Body), From, Ts, S1).

on(<<"REQUEST">>, From, Ts, S = #{me := Me, want := Want, inside := In, perm := Perm}) ->
    Mine = Want =/= none andalso {Want, Me} < {Ts, From},
    if
        In orelse Mine ->
            {S#{deferred := [From | maps:get(deferred, S)]}, []};
        Want =/= none ->
            %% it asked first: let it go ahead, and ask for the permission back
            Keep = maps:get(keep, S),
            Perm1 = case Keep of true -> Perm; false -> Perm#{From := false} end,
            C = maps:get(clock, S),
            {S#{perm := Perm1}, [send(From, "REPLY", C), send(From, "REQUEST", Want)]};
        true ->
            {S#{perm := Perm#{From := false}}, [send(From, "REPLY", maps:get(clock, S))]}
    end;
on(<<"REPLY">>, From, _Ts, S = #{perm := Perm, want := Want}) ->
    case maps:get(crash, S) of
        true -> {waiting, _} = {Want, From};   % "cannot happen", thought the author
        false -> ok
    end,
    S1 = S#{perm := Perm#{From := true}},
    case Want =/= none andalso not maps:get(inside, S1) andalso lists:all(fun(P) -> maps:get(P, maps:get(perm, S1)) end, maps:get(peers, S1)) of
        true -> enter(S1);
        false -> {S1, []}
    end.

enter(S) -> {S#{inside := true}, ["{\"type\":\"enter\",\"resource\":\"cs\"}"]}.

send(To, Type, Ts) ->
    io_lib:format("{\"type\":\"send\",\"to\":~B,\"body\":{\"type\":\"~s\",\"ts\":~B}}", [To, Type, Ts]).

%% --- JSON, enough of it --------------------------------------------------------------------

skip([C | T]) when C =:= $\s; C =:= $\t; C =:= $\n; C =:= $\r -> skip(T);
skip(T) -> T.

value([${ | T]) -> object(skip(T), #{});
value([$[ | T]) -> array(skip(T), []);
value([$" | T]) -> string(T, []);
value("true" ++ T) -> {true, T};
value("false" ++ T) -> {false, T};
value("null" ++ T) -> {null, T};
value(T) -> number(T, []).

object([$} | T], Acc) -> {Acc, T};
object([$" | T], Acc) ->
    {K, T1} = string(T, []),
    [$: | T2] = skip(T1),
    {V, T3} = value(skip(T2)),
    case skip(T3) of
        [$, | T4] -> object(skip(T4), Acc#{K => V});
        [$} | T4] -> {Acc#{K => V}, T4}
    end.

array([$] | T], Acc) -> {lists:reverse(Acc), T};
array(T, Acc) ->
    {V, T1} = value(skip(T)),
    case skip(T1) of
        [$, | T2] -> array(skip(T2), [V | Acc]);
        [$] | T2] -> {lists:reverse([V | Acc]), T2}
    end.

string([$" | T], Acc) -> {unicode:characters_to_binary(lists:reverse(Acc)), T};
string([$\\, $u, A, B, C, D | T], Acc) -> string(T, [list_to_integer([A, B, C, D], 16) | Acc]);
string([$\\, E | T], Acc) ->
    string(T, [case E of $n -> $\n; $t -> $\t; $r -> $\r; $b -> $\b; $f -> $\f; X -> X end | Acc]);
string([C | T], Acc) -> string(T, [C | Acc]).

number(T, Acc) ->
    {Digits, Rest} = lists:splitwith(fun(C) -> lists:member(C, "-+.eE0123456789") end, T),
    Text = Acc ++ Digits,
    case catch list_to_integer(Text) of
        N when is_integer(N) -> {N, Rest};
        _ -> {list_to_float(Text), Rest}
    end.
