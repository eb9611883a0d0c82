#!/usr/bin/env ruby
# frozen_string_literal: true
# Ricart–Agrawala for `mutexlab test mutex`, written in Ruby the way a Ruby programmer would:
# a reader thread feeds a Queue, the main loop handles one input at a time and writes its whole
# answer in one write (a burst of lines), flushed once.  Flags plant bugs or odd styles:
#   --tie        the tie-break on equal timestamps is wrong: the other side always wins
#   --lost       on exit, the last deferred peer never gets its REPLY (off-by-one)
#   --timer      a retry timer thread re-sends REQUEST at once, behind the done line
#   --debug      prints a debugging line to stdout on every REQUEST received
#   --assert     asserts no REQUEST arrives while inside (false: it may), exiting 3
#   --payload    every message carries a large nested payload with unicode keys
#   --huge       every message carries 58 KB of text (a line `test` takes, too large for RabbitMQ)
#   --deep       every message carries a list nested 70 deep (JSON, past mutexlab's 64)
#   --pause      asks for a wake on request, and sends its REQUESTs when woken (a timer)
#   --slow       sleeps 2 s before it reads anything
require 'json'

FLAGS = ARGV.dup.freeze
def flag?(name) = FLAGS.include?("--#{name}")

$stdout.sync = false
OUT = Mutex.new

def emit(lines)
  OUT.synchronize do
    $stdout.write(lines.map { |l| JSON.generate(l) + "\n" }.join)
    $stdout.flush
  end
end

class Node
  def initialize(msg)
    @id = msg['id']
    @peers = msg['peers']
    @clock = 0
    @state = :released
    @my_ts = nil
    @replies = {}
    @deferred = []
  end

  def payload
    return { 'filler' => 'λ' * 29_000 } if flag?('huge')
    return { 'tree' => (1..70).reduce([@id]) { |t, _| [t] } } if flag?('deep')
    return {} unless flag?('payload')

    { 'trace' => { 'ünïcødé-名前' => [@id, { 'nested' => [[1, [2, [3, { 'é' => 'x' * 200 }]]]] }],
                   'filler' => 'λ' * 17_000 } }
  end

  def earlier?(ts, id)
    # is (ts, id) earlier than my own request?
    return ts < @my_ts if flag?('tie') && ts != @my_ts
    return true if flag?('tie')

    ([ts, id] <=> [@my_ts, @id]).negative?
  end

  def handle(msg)
    out = []
    case msg['type']
    when 'request'
      @clock += 1
      @my_ts = @clock
      @state = :wanted
      @replies = {}
      if flag?('pause') # a timer: the REQUESTs go out when mutexlab wakes the node
        out << { 'type' => 'pause' }
      else
        @peers.each { |p| out << send_to(p, 'REQUEST', 'ts' => @my_ts) }
      end
      if @peers.empty?
        @state = :held
        out << { "type" => "enter", "resource" => "cs" }
      end
    when 'wake'
      @peers.each { |p| out << send_to(p, 'REQUEST', 'ts' => @my_ts) }
    when 'release'
      @state = :released
      out << { 'type' => 'exit', 'resource' => 'cs' }
      waiting = flag?('lost') ? @deferred[0...-1] : @deferred
      waiting.each { |p| out << send_to(p, 'REPLY', 'ts' => @clock) }
      @deferred = []
    when 'recv'
      body = msg['body']
      @clock = [@clock, body['ts']].max + 1
      case body['type']
      when 'REQUEST'
        if @state == :held && flag?('assert')
          warn 'assertion failed: a REQUEST while inside'
          exit 3
        end
        out << { 'type' => 'log', 'note' => 'got request' }
        $stdout.puts "DEBUG request from #{msg['from']}" if flag?('debug')
        if @state == :held || (@state == :wanted && !earlier?(body['ts'], msg['from']))
          @deferred << msg['from']
        else
          out << send_to(msg['from'], 'REPLY', 'ts' => @clock)
        end
      when 'REPLY'
        @replies[msg['from']] = true
        if @state == :wanted && @replies.size == @peers.size
          @state = :held
          out << { 'type' => 'enter', 'resource' => 'cs' }
        end
      end
    end
    out
  end

  def send_to(peer, type, fields)
    { 'type' => 'send', 'to' => peer, 'body' => { 'type' => type }.merge(fields).merge(payload) }
  end

  attr_reader :state, :my_ts, :peers
end

sleep 2 if flag?('slow')
inbox = Queue.new
Thread.new do
  $stdin.each_line { |line| inbox << line }
  inbox << :eof
end

node = nil
loop do
  line = inbox.pop
  break if line == :eof

  msg = JSON.parse(line)
  if msg['type'] == 'init'
    node = Node.new(msg)
    emit([{ 'type' => 'done', 'reinit' => true }])
    next
  end
  answer = node.handle(msg)
  unless flag?('timer') && msg['type'] == 'request'
    emit(answer + [{ 'type' => 'done' }])
    next
  end

  # a retry timer of 0 ms: its thread writes the REQUESTs again behind the done, before the flush
  OUT.synchronize { $stdout.write((answer + [{ 'type' => 'done' }]).map { |l| JSON.generate(l) + "\n" }.join) }
  n = node
  Thread.new do
    OUT.synchronize do
      $stdout.write(n.peers.map { |p| JSON.generate(n.send_to(p, 'REQUEST', 'ts' => n.my_ts)) + "\n" }.join)
    end
  end.join
  OUT.synchronize { $stdout.flush }
end
