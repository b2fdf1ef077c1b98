// The .tlop language: cost expressions of parallel algorithms (τ-Lop, LogGP, pLogP, postal, max-rate).
//
// Cost-expression layer.  The schedule layer (stages / par / seq / send / config / over) is
// reserved: its keywords are tokens already, so no user program can use them as names, and the
// rules that use them come with the schedules issue.
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
    | 'channel' name=ID                                                             # channelDecl
    | 'table' name=ID channelParam? '(' paramList? ')' '->' result=typeRef          # tableDecl
    | 'param' name=ID channelParam? ':' type=typeRef                                # paramDecl
    | 'transmission' name=ID '[' channel=ID ']' '(' size=ID ')'
          ('via' via=ID)? '=' body=expr                                             # transmissionDecl
    | 'def' name=ID '(' paramList? ')' ('->' result=typeRef)? '=' body=expr         # defDecl
    | 'algorithm' name=ID '(' paramList? ')' ('->' result=typeRef)? '=' body=expr   # algorithmDecl
    ;

channelParam : '[' name=ID ':' type=typeRef ']' ;

paramList : param (',' param)* ','? ;

param : name=ID ':' type=typeRef (op=compareOp bound=additive)? ('=' default=expr)? ;

// A type: a base name, or a product/quotient of number types with constant exponents
// (time/bytes, bytes^2, real/time).
typeRef : factors+=typeFactor (ops+=('*' | '/') factors+=typeFactor)* ;

typeFactor : name=(ID | 'channel') ('^' neg='-'? exponent=NUMBER)? ;

compareOp : '<' | '<=' | '>' | '>=' | '==' | '!=' ;

// ---------------------------------------------------------------------------- expressions
// Loosest to tightest: let/if/sum (extend as far right as possible), or, and, not, comparison,
// + -, ‖ (||), * / %, unary -, ^ (right associative), postfix (calls, lookups), atoms.

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

comparison : additive (compareOp additive)? ;

additive : concurrent (ops+=('+' | '-') concurrent)* ;

concurrent : multiplicative ('||' multiplicative)* ;

multiplicative : unary (ops+=('*' | '/' | '%') unary)* ;

unary
    : '-' unary                                                                     # negate
    | power                                                                         # unaryPass
    ;

power : base=postfix ('^' exponent=unary)? ;

postfix
    : callee=callName ('[' channel=expr ']')? '(' args=argList? ')'                # call
    | name=ID '[' channel=expr ']'                                                  # indexedName
    | atom                                                                          # atomPass
    ;

callName : ID | 'max' | 'min' ;

argList : arg (',' arg)* ','? ;

arg : (name=ID '=')? value=expr ;

atom
    : NUMBER                                                                        # number
    | ID                                                                            # name
    | '(' inner=expr ')'                                                            # paren
    ;

// ---------------------------------------------------------------------------- reserved words
// The schedule layer's keywords, reserved now so later issues break no program.
reserved : 'stages' | 'stage' | 'par' | 'seq' | 'send' | 'config' | 'over' | 'where' ;

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
