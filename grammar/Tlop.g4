// The .tlop language: cost expressions of parallel algorithms (τ-Lop, LogGP, pLogP, postal, max-rate).
//
// Cost expressions and the schedule layer (stage / stages / par / seq / send / compute / reduce,
// algorithms `over` a process mapping; docs/language.rst).  Soft words that are not reserved: the
// channel attributes (`within node`, `between nodes`, `contention KEY`), `mapping` after `over`,
// and `weight` after a send's size; the builder checks their spelling.
//
// Regenerate the parser with grammar/generate.sh (ANTLR 4.13.2); the result goes to grammar/_antlr.

grammar Tlop;

program : decl* EOF ;

decl
    : docs+=DOC_COMMENT* body=declBody
    ;

declBody
    : 'model' name=ID                                                               # modelDecl
    | 'import' path=STRING                                                          # importDecl
    | 'channel' name=ID attrs+=ID*                                                  # channelDecl
    | 'table' name=ID channelParam? '(' paramList? ')' '->' result=typeRef          # tableDecl
    | 'param' name=ID channelParam? ':' type=typeRef                                # paramDecl
    | 'transmission' name=ID '[' channel=ID ']' '(' size=ID ')'
          ('via' via=ID)? '=' body=expr                                             # transmissionDecl
    | 'def' name=ID '(' paramList? ')' ('->' result=typeRef)? '=' body=expr         # defDecl
    | 'algorithm' name=ID '(' paramList? ')' ('->' result=typeRef)? over=overClause?
          ('where' requires=expr)? '=' body=expr                                    # algorithmDecl
    | 'config' name=ID '{' (fields+=configField (',' fields+=configField)* ','?)? '}'  # configDecl
    ;

// `config partition { N: int, x: int[P] }`: a table of the evaluation's configuration
// (docs/configurations.rst); `[P]` marks a value per process.
configField : name=ID ':' type=typeRef (perRank='[' ranks=ID ']')? ;

// `over map: mapping` or `over mapping`: the algorithm is evaluated with a process mapping.
// `where COND` (after the parameters): a condition on the arguments every call must satisfy, on
// several parameters at once (`S <= m`), combined with and/or (`P & (P - 1) == 0`: a power of two).
overClause : 'over' (name=ID ':')? kind=ID ;

channelParam : '[' name=ID ':' type=typeRef ']' ;

paramList : param (',' param)* ','? ;

// `counts: bytes[P]`: one value per process (a per-rank parameter of an algorithm, read as
// `counts[r]`; P names an int parameter of the same algorithm).
param : name=ID ':' type=typeRef (perRank='[' ranks=ID ']')? (op=compareOp bound=additive)? ('=' default=expr)? ;

// A type: a base name, or a product/quotient of number types with constant exponents
// (time/bytes, bytes^2, real/time).
typeRef : factors+=typeFactor (ops+=('*' | '/') factors+=typeFactor)* ;

typeFactor : name=(ID | 'channel') ('^' neg='-'? exponent=NUMBER)? ;

compareOp : '<' | '<=' | '>' | '>=' | '==' | '!=' ;

// ---------------------------------------------------------------------------- expressions
// Loosest to tightest: let/if/sum (extend as far right as possible), or, and, not, comparison,
// xor, &, << >>, + -, ‖ (||), * / % div, unary -, ^ (right associative), postfix (calls,
// lookups), atoms (numbers, names, parentheses, schedules).

expr
    : 'let' name=ID '=' value=expr 'in' body=expr                                   # letExpr
    | 'if' test=expr 'then' then=expr 'else' otherwise=expr                         # ifExpr
    | kind=('sum' | 'max' | 'min') var=ID 'in' lo=expr '..' hi=expr ':' body=expr  # reduceExpr
    | orExpr                                                                        # plainExpr
    ;

orExpr : andExpr ('or' andExpr)* ;

andExpr : notExpr ('and' notExpr)* ;

notExpr
    : 'not' notExpr                                                                 # notOp
    | comparison                                                                    # notPass
    ;

comparison : bitXor (compareOp bitXor)? ;

bitXor : bitAnd ('xor' bitAnd)* ;

bitAnd : shift ('&' shift)* ;

shift : additive (ops+=('<<' | '>>') additive)* ;

additive : concurrent (ops+=('+' | '-') concurrent)* ;

concurrent : multiplicative ('||' multiplicative)* ;

multiplicative : unary (ops+=('*' | '/' | '%' | 'div') unary)* ;

unary
    : '-' unary                                                                     # negate
    | power                                                                         # unaryPass
    ;

power : base=postfix ('^' exponent=unary)? ;

postfix
    : callee=callName ('[' channel=expr ']')? '(' args=argList? ')'                # call
    | name=ID '[' channel=expr ']'                                                  # indexedName
    | config=ID '.' field=ID ('[' index=expr ']')?                                  # configAccess
    | atom                                                                          # atomPass
    ;

callName : ID | 'max' | 'min' ;

argList : arg (',' arg)* ','? ;

arg : (name=ID '=')? value=expr ;

atom
    : NUMBER                                                                        # number
    | ID                                                                            # name
    | '(' inner=expr ')'                                                            # paren
    | 'stage' '{' items+=item* '}'                                                  # stageAtom
    | 'stages' var=ID 'in' lo=expr '..' hi=expr '{' items+=item* '}'                # stagesAtom
    ;

// ---------------------------------------------------------------------------- schedules
// The items of a stage.  `par` bindings start concurrent sequences, `seq` and `{ … }` append to
// the current sequence in order; the items at the top of a stage are concurrent.

item
    : 'par' var=ID 'in' lo=expr '..' hi=expr ('where' cond=expr)? ':' body=item     # parItem
    | 'seq' var=ID 'in' lo=expr '..' hi=expr ('where' cond=expr)? ':' body=item     # seqItem
    | 'send' src=expr '->' dst=expr ':' size=expr (kw=ID weight=expr)?              # sendItem
    | 'exchange' a=expr '<->' b=expr ':' size=expr (kw=ID)?                         # exchangeItem
    | 'compute' rank=expr ':' cost=expr                                             # computeItem
    | 'reduce' rank=expr ':' size=expr                                              # reduceItem
    | '{' items+=item* '}'                                                          # blockItem
    ;

// ---------------------------------------------------------------------------- reserved words
// Words no program can use as names.
reserved : 'stages' | 'stage' | 'par' | 'seq' | 'send' | 'exchange' | 'compute' | 'reduce' | 'config' | 'over' | 'where'
         | 'div' | 'xor' ;

// ---------------------------------------------------------------------------- tokens

NUMBER : DIGITS ('.' DIGITS)? ([eE] [+-]? DIGITS)? UNIT? ;
fragment DIGITS : [0-9]+ ;
fragment UNIT : [a-zA-Zµ]+ ;

STRING : '"' (~["\\\r\n] | '\\' .)* '"' ;

ID : [a-zA-Z_] [a-zA-Z_0-9]* ;

DOC_COMMENT : '///' ~[\r\n]* ;
COMMENT : '#' ~[\r\n]* -> skip ;
WS : [ \t\r\n]+ -> skip ;

// Any other character is a token of its own so the parser, not the lexer, reports it with a span.
ERROR_CHAR : . ;
