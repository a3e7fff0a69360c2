#!/usr/bin/env python3
"""Functions of ridgeline's own code longer than a limit (default 120 lines): a function that long is split along
its steps (docs/adding-an-op.md, "Keep it simple to see"). Finds bodies by matching braces after comments and
strings are blanked; a heuristic, good for this tree. Prints each function over the limit as `lines  file:line  name`
and exits 1 when there is one.
  scripts/long-functions.py [LIMIT [DIR...]]"""
import re, sys, os
ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
DIRS=sys.argv[2:] if len(sys.argv)>2 else ['core','io','cpu','cuda','backend_api','profiler','report','apps']
TH=int(sys.argv[1]) if len(sys.argv)>1 else 120
EXT=('.cpp','.hpp','.cu','.cuh','.h','.cc')
def strip(src):
    # remove comments, strings, char literals; keep newlines
    out=[];i=0;n=len(src)
    while i<n:
        c=src[i]
        if src.startswith('//',i):
            j=src.find('\n',i); j=n if j<0 else j; i=j; continue
        if src.startswith('/*',i):
            j=src.find('*/',i+2); j=n if j<0 else j+2
            out.append('\n'*src.count('\n',i,j)); i=j; continue
        m=re.match(r'R"([^(\s]*)\(',src[i:i+40]) if c=='R' and (i==0 or not (src[i-1].isalnum() or src[i-1]=='_')) else None
        if m:
            end=')'+m.group(1)+'"'; j=src.find(end,i+m.end()); j=n if j<0 else j+len(end)
            out.append('""'+'\n'*src.count('\n',i,j)); i=j; continue
        if c=='"' or (c=="'" and not (i>0 and (src[i-1].isalnum()))):
            j=i+1
            while j<n and src[j]!=c:
                if src[j]=='\\': j+=1
                if j<n and src[j]=='\n' : break
                j+=1
            out.append(c+c); i=j+1; continue
        out.append(c); i+=1
    return ''.join(out)
KW=('if','for','while','switch','catch','do','else','try','return')
res=[]
for d in DIRS:
    for dp,_,fs in os.walk(os.path.join(ROOT,d)):
        for f in fs:
            if not f.endswith(EXT): continue
            p=os.path.join(dp,f); s=strip(open(p,encoding='utf-8',errors='replace').read())
            stack=[]; last=0; line=1
            for i,c in enumerate(s):
                if c=='\n': line+=1
                elif c in ';':
                    if all(t[0]=='ns' for t in stack): last=i+1
                elif c=='{':
                    if all(t[0]=='ns' for t in stack):
                        hdr=s[last:i].strip(); h=' '.join(hdr.split())
                        # drop preprocessor lines and access specifiers
                        h=re.sub(r'^(public|private|protected)\s*:\s*','',h)
                        h=' '.join(l for l in hdr.split('\n') if not l.strip().startswith('#'))
                        h=' '.join(h.split()); h=re.sub(r'^((public|private|protected)\s*:\s*)+','',h)
                        if re.match(r'^(template\s*<.*>\s*)?(namespace|class|struct|union|enum|extern)\b',h) or h.startswith('namespace') or h=='':
                            kind='ns'
                        elif '(' in h and not re.match(r'^(%s)\b'%'|'.join(KW),h) and not re.search(r'=\s*$',h):
                            kind='fn'
                        else: kind='other'
                        stack.append((kind,line,h))
                    else: stack.append(('in',line,''))
                    last=i+1
                elif c=='}':
                    if stack:
                        k,l0,h=stack.pop()
                        if k=='fn':
                            ln=line-l0+1
                            m=re.search(r'([~\w:]+(?:operator\s*\S+?)?)\s*\(',h)
                            name=m.group(1) if m else h[:60]
                            res.append((ln,os.path.relpath(p,ROOT),l0,name))
                    if all(t[0]=='ns' for t in stack): last=i+1
res.sort(reverse=True)
for ln,p,l0,name in res:
    if ln>TH: print(f'{ln:5d}  {p}:{l0}  {name}')
over = sum(1 for r in res if r[0] > TH)
print('functions measured:', len(res), ' over', TH, ':', over, file=sys.stderr)
sys.exit(1 if over else 0)
