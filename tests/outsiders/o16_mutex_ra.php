<?php
// Ricart-Agrawala mutual exclusion as a mutexlab node (docs/test-any-program.md), PHP 8 CLI.
// Reads one JSON line at a time from STDIN, answers with JSON lines and {"type":"done"}.
// The CLI writes STDOUT unbuffered, so no flush is needed; php.ini's output_buffering stays off.
//
//   BROKEN_INSIDE=1  forgets that a node inside the section must defer, and replies at once
//   WARN_SEQ=1       reads a field the input does not have (a warning, wherever PHP shows it)

declare(strict_types=1);

final class Node
{
    private int $id = 0;
    private array $peers = [];
    private int $clock = 0;
    private string $state = 'RELEASED';   // RELEASED, WANTED, HELD
    private int $myTs = 0;
    private array $replied = [];           // peer id => true, for the request in hand
    private array $deferred = [];          // peer ids we owe a REPLY
    private array $out = [];

    public function __construct(private bool $brokenInside, private bool $warnSeq) {}

    private function emit(array $line): void
    {
        $this->out[] = $line;
    }

    private function send(int $to, string $type): void
    {
        $this->emit(['type' => 'send', 'to' => $to, 'body' => ['type' => $type, 'ts' => $this->myTs, 'from' => $this->id]]);
    }

    private function tryEnter(): void
    {
        if ($this->state === 'WANTED' && count($this->replied) === count($this->peers)) {
            $this->state = 'HELD';
            $this->emit(['type' => 'enter', 'resource' => 'cs']);
            $this->emit(['type' => 'state', 'state' => 'HELD']);
        }
    }

    /** @return array[] the lines answering $msg, the done line last */
    public function handle(array $msg): array
    {
        $this->out = [];
        $reinit = null;
        switch ($msg['type']) {
            case 'init':
                $this->id = $msg['id'];
                $this->peers = $msg['peers'];
                $this->clock = 0;
                $this->state = 'RELEASED';
                $this->replied = $this->deferred = [];
                $reinit = true;
                break;
            case 'request':
                if ($this->warnSeq) {
                    $this->clock += $msg['seq'];   // no such field: null, and a warning
                }
                $this->clock++;
                $this->myTs = $this->clock;
                $this->state = 'WANTED';
                $this->replied = [];
                $this->emit(['type' => 'state', 'state' => 'WANTED']);
                foreach ($this->peers as $p) {
                    $this->send($p, 'REQUEST');
                }
                $this->tryEnter();
                break;
            case 'release':
                $this->state = 'RELEASED';
                $this->emit(['type' => 'exit', 'resource' => 'cs']);
                $this->emit(['type' => 'state', 'state' => 'RELEASED']);
                foreach ($this->deferred as $p) {
                    $this->emit(['type' => 'send', 'to' => $p, 'body' => ['type' => 'REPLY', 'from' => $this->id]]);
                }
                $this->deferred = [];
                break;
            case 'recv':
                $body = $msg['body'];
                $from = $msg['from'];
                if ($body['type'] === 'REQUEST') {
                    $this->clock = max($this->clock, $body['ts']) + 1;
                    $mine = [$this->myTs, $this->id] < [$body['ts'], $from];  // arrays compare element by element
                    $inside = $this->state === 'HELD' && !$this->brokenInside;
                    if ($inside || ($this->state === 'WANTED' && $mine)) {
                        $this->deferred[] = $from;
                    } else {
                        $this->emit(['type' => 'send', 'to' => $from, 'body' => ['type' => 'REPLY', 'from' => $this->id]]);
                    }
                } elseif ($body['type'] === 'REPLY' && $this->state === 'WANTED') {
                    $this->replied[$from] = true;
                    $this->tryEnter();
                }
                break;
        }
        $done = ['type' => 'done'];
        if ($reinit !== null) {
            $done['reinit'] = $reinit;
        }
        $this->out[] = $done;
        return $this->out;
    }
}

$node = new Node(getenv('BROKEN_INSIDE') === '1', getenv('WARN_SEQ') === '1');
while (($line = fgets(STDIN)) !== false) {
    $line = trim($line);
    if ($line === '') {
        continue;
    }
    $msg = json_decode($line, true, 512, JSON_THROW_ON_ERROR);
    foreach ($node->handle($msg) as $answer) {
        echo json_encode($answer, JSON_UNESCAPED_SLASHES | JSON_UNESCAPED_UNICODE), "\n";
    }
}
