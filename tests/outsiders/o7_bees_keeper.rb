#!/usr/bin/env ruby
# frozen_string_literal: true
# Mason bees for `mutexlab test bees`, in plain Ruby: bee 1 is also the keeper of the reeds and
# the flowers (the others ask it by message; its own asks are calls).  One `gets` loop, each
# output line its own `puts` (several writes per answer), $stdout.sync on.
#   --flower-offbyone  the keeper hands out one flower more than there are
#   --crowded          a reed takes one bee more than its cocoons allow
#   --no-visit         the last egg is laid without a flower visit
require 'json'
$stdout.sync = true
FLAGS = ARGV.freeze

def out(obj) = puts(JSON.generate(obj))
def flag?(name) = FLAGS.include?("--#{name}")

class Keeper
  def initialize(opts, bee)
    @k = opts['flowers']
    @per_reed = opts['cocoons'] / opts['eggs'] + (flag?('crowded') ? 1 : 0)
    @reeds = opts['reeds']
    @assigned = Hash.new(0) # reed -> bees given it so far
    @busy = {}
    @reed_queue = Hash.new { |h, r| h[r] = [] }
    @free = @k
    @flower_queue = []
    @bee = bee
  end

  def ask_reed(who)
    reed = (1..@reeds).find { |r| @assigned[r] < @per_reed }
    return tell(who, 'RETIRE', {}) if reed.nil?

    before = @assigned[reed] * @bee.eggs
    @assigned[reed] += 1
    if @busy[reed]
      @reed_queue[reed] << [who, before]
    else
      @busy[reed] = true
      tell(who, 'REED', 'reed' => reed, 'before' => before)
    end
  end

  def release_reed(reed)
    @busy[reed] = false
    return if @reed_queue[reed].empty?

    who, before = @reed_queue[reed].shift
    @busy[reed] = true
    tell(who, 'REED', 'reed' => reed, 'before' => before)
  end

  def ask_flower(who)
    limit = flag?('flower-offbyone') ? -1 : 0
    if @free > limit
      @free -= 1
      tell(who, 'FLOWER', {})
    else
      @flower_queue << who
    end
  end

  def release_flower
    @free += 1
    return if @flower_queue.empty?

    @free -= 1
    tell(@flower_queue.shift, 'FLOWER', {})
  end

  def tell(who, type, fields)
    if who == 1
      @bee.got(type, fields)
    else
      out('type' => 'send', 'to' => who, 'body' => { 'type' => type }.merge(fields))
    end
  end
end

class Bee
  attr_reader :eggs

  def initialize(msg)
    @id = msg['id']
    @eggs = msg['options']['eggs']
    @laid = 0
    @keeper = @id == 1 ? Keeper.new(msg['options'], self) : nil
  end

  def start = ask('REQreed', :ask_reed)

  def ask(type, call)
    return @keeper.public_send(call, 1) if @keeper

    out('type' => 'send', 'to' => 1, 'body' => { 'type' => type })
  end

  def give_back(type, call, fields = {})
    return @keeper.public_send(call, *fields.values) if @keeper

    out('type' => 'send', 'to' => 1, 'body' => { 'type' => type }.merge(fields))
  end

  def got(type, fields)
    case type
    when 'RETIRE'
      out('type' => 'state', 'state' => 'RETIRED')
    when 'REED'
      @reed = fields['reed']
      @before = fields['before']
      out('type' => 'enter', 'resource' => "reed:#{@reed}")
      next_flower
    when 'FLOWER'
      out('type' => 'enter', 'resource' => 'flower')
      out('type' => 'exit', 'resource' => 'flower')
      give_back('RELflower', :release_flower)
      lay
    end
  end

  def next_flower
    return ask('REQflower', :ask_flower) unless flag?('no-visit') && @laid == @eggs - 1

    lay
  end

  def lay
    @laid += 1
    out('type' => 'event', 'event' => 'egg', 'reed' => @reed, 'count' => @laid, 'in_reed' => @before + @laid)
    return next_flower if @laid < @eggs

    out('type' => 'exit', 'resource' => "reed:#{@reed}")
    out('type' => 'state', 'state' => 'DEAD')
    give_back('RELreed', :release_reed, 'reed' => @reed)
  end

  def handle(msg)
    body = msg['body']
    case body['type']
    when 'REQreed' then @keeper.ask_reed(msg['from'])
    when 'RELreed' then @keeper.release_reed(body['reed'])
    when 'REQflower' then @keeper.ask_flower(msg['from'])
    when 'RELflower' then @keeper.release_flower
    else got(body['type'], body)
    end
  end
end

bee = nil
while (line = $stdin.gets)
  msg = JSON.parse(line)
  if msg['type'] == 'init'
    bee = Bee.new(msg)
    bee.start
    out('type' => 'done', 'reinit' => true)
    next
  end
  bee.handle(msg) if msg['type'] == 'recv'
  out('type' => 'done')
end
