%% The BEAM peer of `jade perf --peers`: the harness's shapes as Erlang
%% processes, timed in this emulator with its own clock
%% (erlang:monotonic_time/1).
%%
%% Usage: erl -noshell +S N:N -pa DIR -run jade_peers main workers=N SHAPE=COUNT ...
%%
%% Each SHAPE=COUNT runs one shape with the harness's count (iterations,
%% fan-out rounds, waiters or ticks) after a warm-up of COUNT div 10 + 1
%% where the shape is a throughput one, and prints one JSON line on stdout
%% (perf/peers_parse.go reads them). The emulator halts with status 0 when
%% every shape ran, 1 on a bad argument.
-module(jade_peers).
-export([main/1]).

%% The fan-out width of spawn_many and the chain length of chained_spawn.
-define(WIDTH, 10000).
%% yield_many: processes, and yields per process.
-define(YIELD_PROCS, 100).
-define(YIELDS, 1000).
%% chan_fan_in: processes, and messages per process and round.
-define(FAN_IN, 100).
-define(FAN_IN_M, 1000).
%% The fairness ticker's schedule step, ns.
-define(PERIOD, 1000000).

main(Args) ->
    try
        Kvs = [parse_arg(A) || A <- Args],
        Workers = proplists:get_value("workers", Kvs),
        is_integer(Workers) andalso Workers >= 1 orelse throw("workers=N (N >= 1) is required"),
        [run(Shape, Workers, N) || {Shape, N} <- Kvs, Shape =/= "workers"],
        erlang:halt(0)
    catch
        throw:Why ->
            io:format(standard_error, "jade_peers: ~s~n", [Why]),
            erlang:halt(1)
    end.

parse_arg(A) ->
    case string:split(A, "=") of
        [K, V] ->
            case string:to_integer(V) of
                {N, []} when N >= 0 -> {K, N};
                _ -> throw(io_lib:format("argument ~p: not a count", [A]))
            end;
        _ ->
            throw(io_lib:format("argument ~p: want KEY=VALUE", [A]))
    end.

now_ns() -> erlang:monotonic_time(nanosecond).

run("spawn_join", W, N) -> throughput("spawn_join", W, N, 1, fun spawn_join/1);
run("ping_pong", W, N) -> throughput("ping_pong", W, N, 1, fun ping_pong/1);
run("yield", W, N) -> throughput("yield", W, N, 1, fun yield_n/1);
run("spawn_many", W, N) -> throughput("spawn_many", W, N, ?WIDTH, fun spawn_many/1);
run("chained_spawn", W, N) -> throughput("chained_spawn", W, N, ?WIDTH, fun chained_spawn/1);
run("yield_many", W, N) -> throughput("yield_many", W, N, ?YIELD_PROCS * ?YIELDS, fun yield_many/1);
run("parked", W, N) -> parked(W, N);
run("wake_latency", W, N) -> latencies("wake_latency", W, N, wake_latency(N), []);
run("sleep_lateness", W, N) -> latencies("sleep_lateness", W, N, sleep_lateness(N), []);
run("fairness_timer", W, N) -> fairness_timer(W, N);
run("chan_ping_pong", W, N) -> throughput("chan_ping_pong", W, N, 1, fun chan_ping_pong/1);
run("chan_ping_pong_w2", W, N) -> throughput("chan_ping_pong_w2", W, N, 1, fun chan_ping_pong/1);
run("chan_stream", W, N) -> throughput("chan_stream", W, N, 1, fun chan_stream/1);
run("chan_stream_w2", W, N) -> throughput("chan_stream_w2", W, N, 1, fun chan_stream/1);
run("chan_fan_in", W, N) -> throughput("chan_fan_in", W, N, ?FAN_IN * ?FAN_IN_M, fun chan_fan_in/1);
run("chan_fan_in_w2", W, N) -> throughput("chan_fan_in_w2", W, N, ?FAN_IN * ?FAN_IN_M, fun chan_fan_in/1);
run(Shape, _, _) -> throw(io_lib:format("unknown shape ~p", [Shape])).

%% Times one throughput shape, a warm-up of N div 10 + 1 and then N, in a
%% fresh process (not the one -run started), and prints ns per unit.
throughput(Shape, W, N, Per, F) ->
    in_process(fun() -> F(N div 10 + 1) end),
    T0 = now_ns(),
    in_process(fun() -> F(N) end),
    Ns = (now_ns() - T0) / (N * Per),
    io:format("{\"peer\":\"beam\",\"shape\":\"~s\",\"workers\":~b,\"n\":~b,\"ns\":~.3f}~n", [Shape, W, N, Ns]).

in_process(F) ->
    {Pid, Ref} = spawn_monitor(fun() -> exit({done, F()}) end),
    receive
        {'DOWN', Ref, process, Pid, {done, V}} -> V;
        {'DOWN', Ref, process, Pid, Why} -> throw(io_lib:format("shape process: ~p", [Why]))
    end.

%% spawn + join: the child's result message is the join.
spawn_join(0) -> ok;
spawn_join(N) ->
    Parent = self(),
    Pid = spawn(fun() -> Parent ! {self(), 0} end),
    receive {Pid, _} -> ok end,
    spawn_join(N - 1).

ping_pong(N) ->
    Self = self(),
    Ponger = spawn(fun() -> ponger(N, Self) end),
    pinger(N, Ponger).

pinger(0, _) -> ok;
pinger(N, Ponger) ->
    Ponger ! ping,
    receive pong -> ok end,
    pinger(N - 1, Ponger).

ponger(0, _) -> ok;
ponger(N, Pinger) ->
    receive ping -> Pinger ! pong end,
    ponger(N - 1, Pinger).

%% chan_ping_pong: ping_pong with a value each way ({ping, I} and
%% {pong, I}), the pinger checking the last one.
chan_ping_pong(N) ->
    Self = self(),
    Ponger = spawn(fun() -> chan_ponger(N, Self) end),
    chan_pinger(0, N, Ponger, -1).

chan_pinger(I, N, _, V) when I >= N ->
    V =:= N - 1 orelse throw("chan_ping_pong: wrong value"),
    ok;
chan_pinger(I, N, Ponger, _) ->
    Ponger ! {ping, I},
    receive {pong, V} -> chan_pinger(I + 1, N, Ponger, V) end.

chan_ponger(0, _) -> ok;
chan_ponger(K, Pinger) ->
    receive {ping, V} -> Pinger ! {pong, V} end,
    chan_ponger(K - 1, Pinger).

%% chan_stream: this process sends 0..N-1 to a consumer's mailbox
%% (unbounded: BEAM has no bounded channel), which returns the sum.
chan_stream(N) ->
    Self = self(),
    C = spawn(fun() -> Self ! {sum, consume(N, 0)} end),
    produce(0, N, C),
    receive {sum, S} -> S =:= N * (N - 1) div 2 orelse throw("chan_stream: wrong sum") end,
    ok.

produce(I, N, _) when I >= N -> ok;
produce(I, N, C) ->
    C ! {msg, I},
    produce(I + 1, N, C).

consume(0, S) -> S;
consume(K, S) -> receive {msg, V} -> consume(K - 1, S + V) end.

%% chan_fan_in: rounds of ?FAN_IN processes sending 0..?FAN_IN_M-1 each to
%% this process's mailbox.
chan_fan_in(0) -> ok;
chan_fan_in(R) ->
    Self = self(),
    [spawn(fun() -> produce(0, ?FAN_IN_M, Self) end) || _ <- lists:seq(1, ?FAN_IN)],
    S = consume(?FAN_IN * ?FAN_IN_M, 0),
    S =:= ?FAN_IN * (?FAN_IN_M * (?FAN_IN_M - 1) div 2) orelse throw("chan_fan_in: wrong sum"),
    chan_fan_in(R - 1).

yield_n(0) -> ok;
yield_n(N) ->
    erlang:yield(),
    yield_n(N - 1).

spawn_many(0) -> ok;
spawn_many(R) ->
    Parent = self(),
    [spawn(fun() -> Parent ! {part, X} end) || X <- lists:seq(0, ?WIDTH - 1)],
    Sum = collect(?WIDTH, 0),
    Sum =:= ?WIDTH * (?WIDTH - 1) div 2 orelse throw("spawn_many: wrong sum"),
    spawn_many(R - 1).

collect(0, Acc) -> Acc;
collect(K, Acc) -> receive {part, X} -> collect(K - 1, Acc + X) end.

chained_spawn(0) -> ok;
chained_spawn(R) ->
    Parent = self(),
    spawn(fun() -> link_(?WIDTH, Parent) end),
    receive chain_done -> ok end,
    chained_spawn(R - 1).

link_(0, Parent) -> Parent ! chain_done;
link_(K, Parent) -> spawn(fun() -> link_(K - 1, Parent) end).

yield_many(0) -> ok;
yield_many(R) ->
    Parent = self(),
    [spawn(fun() -> yield_n(?YIELDS), Parent ! yielded end) || _ <- lists:seq(1, ?YIELD_PROCS)],
    [receive yielded -> ok end || _ <- lists:seq(1, ?YIELD_PROCS)],
    yield_many(R - 1).

%% The resident set of this emulator from /proc/PID/statm, bytes (0 where
%% unreadable).
resident() ->
    case file:read_file("/proc/" ++ os:getpid() ++ "/statm") of
        {ok, B} ->
            [_, Pages | _] = string:lexemes(binary_to_list(B), " \n"),
            list_to_integer(Pages) * 4096;
        _ -> 0
    end.

%% Parks N processes in a receive and reports erlang:memory(processes) and
%% the resident set they add per process, then releases them. The parent
%% keeps their pids (one list cell each, 16 B) to release them.
parked(W, N) ->
    in_process(fun() ->
        Parent = self(),
        erlang:garbage_collect(),
        M0 = erlang:memory(processes),
        R0 = resident(),
        Pids = [spawn(fun() -> Parent ! ready, receive go -> ok end end) || _ <- lists:seq(1, N)],
        [receive ready -> ok end || _ <- Pids],
        erlang:garbage_collect(),
        Heap = (erlang:memory(processes) - M0) / N,
        Rss = (resident() - R0) / N,
        [P ! go || P <- Pids],
        io:format("{\"peer\":\"beam\",\"shape\":\"parked\",\"workers\":~b,\"n\":~b,\"heap_bytes\":~.1f,\"rss_bytes\":~.1f}~n",
                  [W, N, Heap, Rss])
    end).

%% Prints a latency shape's line: exact percentiles of the sorted sample
%% (as bench.Summarize computes them).
latencies(Shape, W, N, Ds, Extra) ->
    S = list_to_tuple(lists:sort(Ds)),
    L = tuple_size(S),
    At = fun(Q) -> element(min(L, trunc(Q * L) + 1), S) end,
    Ps = case L of
        0 -> "";
        _ -> io_lib:format(",\"p50_ns\":~b,\"p99_ns\":~b,\"p999_ns\":~b,\"max_ns\":~b",
                           [At(0.50), At(0.99), At(0.999), element(L, S)])
    end,
    Ex = [io_lib:format(",\"~s\":~p", [K, V]) || {K, V} <- Extra],
    io:format("{\"peer\":\"beam\",\"shape\":\"~s\",\"workers\":~b,\"n\":~b,\"ran\":~b~s~s}~n",
              [Shape, W, N, L, Ps, Ex]).

%% The waker is this process (BEAM has no thread outside its schedulers to
%% wake from): it sleeps 1 ms (the shortest BEAM timer), sends the ticker a
%% message and measures until the ticker runs.
wake_latency(N) ->
    in_process(fun() ->
        Self = self(),
        T = spawn(fun() -> woken(N, Self) end),
        wakes(N, T, [])
    end).

woken(0, _) -> ok;
woken(K, Waker) ->
    receive wake -> Waker ! {woke, now_ns()} end,
    woken(K - 1, Waker).

wakes(0, _, Acc) -> Acc;
wakes(K, T, Acc) ->
    receive after 1 -> ok end,
    T0 = now_ns(),
    T ! wake,
    receive {woke, T1} -> wakes(K - 1, T, [T1 - T0 | Acc]) end.

%% N sleeps of 1 ms (receive ... after 1); lateness = actual − requested.
sleep_lateness(N) ->
    in_process(fun() ->
        [begin
             T0 = now_ns(),
             receive after 1 -> ok end,
             now_ns() - T0 - ?PERIOD
         end || _ <- lists:seq(1, N)]
    end).

%% W+1 spinning hog processes, then a ticker that sleeps to each deadline
%% start + i × 1 ms (a relative timer rounded up to whole ms, the BEAM
%% timer resolution) and records how late it runs. Bounded like the Tokio
%% peer: after Ticks ms + 1 s the hogs are killed and only the ticks that
%% ran by then are reported.
fairness_timer(W, Ticks) ->
    C = counters:new(1, [write_concurrency]),
    Hogs = [spawn(fun() -> hog(C, 0) end) || _ <- lists:seq(1, W + 1)],
    T0 = now_ns(),
    Self = self(),
    Ticker = spawn(fun() -> Self ! {ticks, self(), ticker(Ticks, now_ns(), 1, [])} end),
    Bound = Ticks + 1000,
    Ds = receive {ticks, Ticker, L} -> L after Bound -> exit(Ticker, kill), [] end,
    Rate = counters:get(C, 1) / ((now_ns() - T0) / 1.0e9),
    [exit(H, kill) || H <- Hogs],
    latencies("fairness_timer", W, Ticks, Ds, [{"bound_ms", Bound}, {"hog_units_per_s", Rate}]).

ticker(Ticks, _, I, Acc) when I > Ticks -> Acc;
ticker(Ticks, Start, I, Acc) ->
    Dl = Start + I * ?PERIOD,
    Wait = max(0, (Dl - now_ns() + ?PERIOD - 1) div ?PERIOD),
    receive after Wait -> ok end,
    ticker(Ticks, Start, I + 1, [now_ns() - Dl | Acc]).

%% Spins forever; every 2^20 iterations it counts a unit of progress.
hog(C, X) ->
    X1 = X + 1,
    case X1 band 16#FFFFF of
        0 -> counters:add(C, 1, 1);
        _ -> ok
    end,
    hog(C, X1).
