# Ricart–Agrawala as a mutexlab node in awk: one input line in, its answer and done out.
#
#   mutexlab test mutex --node "gawk -f examples/nodes/ricart_agrawala.awk"
#   mutexlab test mutex --node "mawk -W interactive -f examples/nodes/ricart_agrawala.awk"
#
# mawk reads a pipe a block at a time unless -W interactive: without it the node never sees its
# init and stalls. Each answer ends with fflush(): awk's output into a pipe is buffered too.
# The inputs come compact with their keys sorted (a recv's body, with a "type" of its own, comes
# before the line's "type"), so the kind of a line is matched at its end.
#
# -v broken=1 answers a REQUEST even while it holds the critical section.

function num(key,   m) {
    if (!match($0, "\"" key "\":[0-9]+")) return -1
    m = substr($0, RSTART, RLENGTH)
    sub(/.*:/, "", m)
    return m + 0
}
function reply(to) {
    clock++
    print "{\"type\":\"send\",\"to\":" to ",\"body\":{\"type\":\"REPLY\",\"ts\":" clock "}}"
}
/"type":"init"}$/ {
    me = num("id"); n = num("nodes"); clock = 0; ts = 0; wanting = 0; holding = 0; got = 0
    split("", deferred)
    print "{\"type\":\"done\",\"reinit\":true}"  # it starts afresh on the next init
    fflush()
    next
}
/"type":"request"}$/ {
    clock++; ts = clock; wanting = 1; got = 0
    for (p = 1; p <= n; p++)
        if (p != me) print "{\"type\":\"send\",\"to\":" p ",\"body\":{\"type\":\"REQUEST\",\"ts\":" ts "}}"
}
/"type":"release"}$/ {
    holding = 0
    print "{\"type\":\"exit\",\"resource\":\"cs\"}"
    for (p = 1; p <= n; p++)
        if (p in deferred) reply(p)
    split("", deferred)
}
/"type":"recv"}$/ {
    from = num("from"); t = num("ts")
    if (t > clock) clock = t
    clock++
    if ($0 ~ /"type":"REQUEST"/) {
        mine = wanting && (ts < t || (ts == t && me < from))
        if ((holding && !broken) || mine) deferred[from] = 1
        else reply(from)
    } else got++
}
{
    if (wanting && got == n - 1) {
        wanting = 0; holding = 1
        print "{\"type\":\"enter\",\"resource\":\"cs\"}"
    }
    print "{\"type\":\"done\"}"
    fflush()
}
