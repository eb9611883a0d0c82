#!/usr/bin/env ruby
# K-mutual exclusion, Raymond (1989): a node asks every peer and enters with N-K permissions;
# a peer defers its permission while it is inside or asking with priority. Written from
# docs/test-any-program.md alone. Flags: --stale (a permission for an earlier request counts
# toward the current one), --slow (sleeps 2 s before reading anything), --chatty (debugging on
# stderr, a lot of it).
require "json"

STALE = ARGV.include?("--stale")
CHATTY = ARGV.include?("--chatty")
sleep 2 if ARGV.include?("--slow")

class Node
  def initialize(msg)
    @id = msg["id"]
    @peers = msg["peers"]
    @k = (msg["options"] || {}).fetch("k", 2)
    @clock = 0
    @asking = nil    # [ts, id] of the pending request
    @inside = false
    @granted = 0
    @deferred = []
    @seq = 0
  end

  def need = [@peers.size + 1 - @k, 0].max

  def handle(msg, out)
    case msg["type"]
    when "request"
      @clock += 1
      @seq += 1
      @asking = [@clock, @id]
      @granted = 0
      @peers.each { |p| out << { type: "send", to: p, body: { type: "REQ", ts: @clock, seq: @seq } } }
      try_enter(out)
    when "release"
      @inside = false
      @asking = nil
      out << { type: "exit", resource: "cs" }
      @deferred.each { |p, s| out << { type: "send", to: p, body: { type: "PERM", ts: @clock, seq: s } } }
      @deferred.clear
    when "recv"
      body = msg["body"]
      from = msg["from"]
      @clock = [@clock, body["ts"]].max + 1
      case body["type"]
      when "REQ"
        theirs = [body["ts"], from]
        if @inside || (@asking && (@asking <=> theirs) < 0)
          @deferred << [from, body["seq"]]
        else
          out << { type: "send", to: from, body: { type: "PERM", ts: @clock, seq: body["seq"] } }
        end
      when "PERM"
        # the permission names the request it answers (the asker's seq, echoed)
        @granted += 1 if STALE || (@asking && body["seq"] == @seq)
        try_enter(out)
      end
    end
  end

  def try_enter(out)
    return unless @asking && !@inside && @granted >= need
    @inside = true
    out << { type: "enter", resource: "cs" }
  end
end

node = nil
STDOUT.sync = false
while (line = STDIN.gets)
  line = line.strip
  next if line.empty?
  msg = JSON.parse(line)
  out = []
  if msg["type"] == "init"
    node = Node.new(msg)
    STDOUT.write(JSON.generate({ type: "done", reinit: true }) + "\n")
  else
    node.handle(msg, out)
    out.each { |o| STDOUT.write(JSON.generate(o) + "\n") }
    STDOUT.write("{\"type\":\"done\"}\n")
  end
  $stderr.write("node #{msg['type']} -> #{out.size} lines " + ("." * 4000) + "\n") if CHATTY
  STDOUT.flush
end
